"""Every LSF and Slurm command XCE answers to, and the module that answers it.

One table, read by whoever installs the commands (``xce compat``) and by the tests that run each one:
a program is a module with ``main(argv: list[str]) -> int``, argv without the program's own name.
"""

from __future__ import annotations

LSF = ("bsub", "bjobs", "bkill", "bstop", "bresume", "bmod", "brequeue", "bhist", "bacct", "bqueues",
       "bhosts", "bparams", "lsid", "lsclusters", "lshosts", "badmin")
SLURM = ("sbatch", "squeue", "scancel", "sacct", "sinfo", "scontrol", "srun", "salloc")

PROGRAMS: dict[str, str] = {**{name: f"xce.compat.lsf.{name}" for name in LSF},
                            **{name: f"xce.compat.slurm.{name}" for name in SLURM}}
