#!/bin/bash -l

#SBATCH --partition=general-compute
#SBATCH --qos=general-compute
#SBATCH --clusters=ub-hpc
#SBATCH --time=01:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=12G
#SBATCH --gpus-per-node=2
