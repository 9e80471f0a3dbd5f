#!/bin/bash
#SBATCH --nodes=32 -p classc -A sxg125_csds438 --mem=32G
