#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=1
#SBATCH --job-name=neuron
#SBATCH --time=0-01:00:00
#SBATCH --mem=4G
