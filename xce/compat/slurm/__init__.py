"""Slurm commands (``sbatch``, ``squeue``, ...) over XCE."""
