"""Every LSF and Slurm command XCE answers to, and the module that answers it.

One table, read by whoever installs the commands (``xce compat``) and by the tests that run each one:
a program is a module with ``main(argv: list[str]) -> int``, argv without the program's own name.

Every other name of the two systems' client programs (:data:`SLURM_CLIENTS`, :data:`LSF_CLIENTS`)
gets a launcher too, which says in one line that XCE does not provide it (:mod:`xce.compat.absent`):
on a machine that also has Slurm's or LSF's clients installed, a name XCE lacks must not fall
through to the other scheduler's program and fail with its configuration error.
"""

from __future__ import annotations

LSF = ("bsub", "bjobs", "bkill", "bstop", "bresume", "bmod", "brequeue", "bhist", "bacct", "bqueues",
       "bhosts", "bparams", "lsid", "lsclusters", "lshosts", "badmin", "bpeek", "lsload")
SLURM = ("sbatch", "squeue", "scancel", "sacct", "sinfo", "scontrol", "srun", "salloc", "sstat", "seff", "sprio",
         "sshare", "sattach")

PROGRAMS: dict[str, str] = {**{name: f"xce.compat.lsf.{name}" for name in LSF},
                            **{name: f"xce.compat.slurm.{name}" for name in SLURM}}

#: The user commands of Slurm 23.11 (its man1 pages, and the contributed ``seff``, ``smail``, ``sjstat``).
SLURM_CLIENTS = ("sacct", "sacctmgr", "salloc", "sattach", "sbatch", "sbcast", "scancel", "scontrol", "scrontab",
                 "scrun", "sdiag", "seff", "sgather", "sh5util", "sinfo", "sjobexitmod", "sjstat", "smail", "sprio",
                 "squeue", "sreport", "srun", "sshare", "sstat", "strigger", "sview")
#: The commands of IBM Spectrum LSF 10.1 (its command reference), batch and base.
LSF_CLIENTS = ("bacct", "badmin", "bapp", "barrier", "bbot", "bchkpnt", "bclusters", "bconf", "bctrld", "bdata",
               "bentags", "bgadd", "bgdel", "bgmod", "bgpinfo", "bhist", "bhosts", "bhpart", "bimages", "bjdepinfo",
               "bjgroup", "bjobs", "bkill", "bladmin", "blaunch", "blcollect", "blhosts", "blimits", "blinfo",
               "blkill", "blparams", "blstat", "bltasks", "blusers", "bmgroup", "bmig", "bmod", "bparams",
               "bpeek", "bpost", "bqueues", "bread", "brequeue", "bresize", "brestart", "bresources", "bresume",
               "brlainfo", "brsvadd", "brsvdel", "brsvjob", "brsvmod", "brsvs", "brsvsub", "brun", "bsla",
               "bslots", "bstage", "bstatus", "bstop", "bsub", "bswitch", "btop", "bugroup", "busers", "bwait",
               "ch", "lsacct", "lsacctmrg", "lsadmin", "lsclusters", "lseligible", "lsfinstall", "lsfmon",
               "lsfrestart", "lsfshutdown", "lsfstartup", "lsgrun", "lshosts", "lsid", "lsinfo", "lsload",
               "lsloadadj", "lslogin", "lsmake", "lsmon", "lsplace", "lsportcheck", "lsrcp", "lsreghost",
               "lsrtasks", "lsrun", "lstcsh")

ABSENT_MODULE = "xce.compat.absent"
#: What ``xce compat install`` writes: each program, and a refusal for each client name XCE lacks.
LAUNCHERS: dict[str, str] = {**{name: ABSENT_MODULE for name in (*LSF_CLIENTS, *SLURM_CLIENTS)}, **PROGRAMS}
