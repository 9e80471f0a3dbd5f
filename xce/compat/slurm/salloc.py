"""``salloc``: an allocation, and a shell (or the given command) in it.

The allocation is an interactive job: its command (``$SHELL``, or what follows the options) runs
on the allocation's head host on a pseudo-terminal that is this one, with ``SLURM_JOB_ID`` and the
rest of Slurm's variables set, so ``srun`` inside it starts the allocation's tasks. Ending the
command ends the allocation, as with Slurm.
"""

from __future__ import annotations

import os
import sys

from xce.compat.slurm import tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "salloc"
#: The program's own options beside sbatch's job options (:mod:`xce.compat.slurm.tables`).
EXTRA, SHORTS = tables.own_names(tables.SALLOC_OWN)
REFUSED = {"no-shell": "--no-shell: an allocation here lives as long as its command; submit a batch job instead"}


def main(argv: list[str]) -> int:
    from xce.cli.jobscript import Refused
    from xce.compat.slurm import _alloc

    longs, shorts = _alloc.table(EXTRA, SHORTS)
    try:
        opts, command = parse(argv, longs, shorts, stop_at_operand=True)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    names = {n for n, _ in opts}
    for name in names:
        if name in REFUSED:
            return _err(REFUSED[name])
    if names & {"help", "usage"}:
        from xce.compat.slurm.tables import show_help

        show_help(PROG, names, REFUSED)
        return 0
    if "version" in names:
        sys.stdout.write("slurm 22.05.8\n")
        return 0
    command = command or [os.environ.get("SHELL") or "/bin/sh"]
    try:
        job = _alloc.body(_alloc.job_words(opts), command, PROG)
    except Refused as exc:
        return _err(str(exc))
    return _alloc.run(PROG, job, raw=True, announce="quiet" not in names)


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
