#!/bin/bash

#SBATCH --partition=physical
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
