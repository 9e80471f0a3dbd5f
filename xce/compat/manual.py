"""Each front-end's declaration, complete: its option table (:mod:`xce.compat.slurm.tables`,
:mod:`xce.compat.lsf.tables`) with what only the program's module holds (the reasons it refuses
options, LSF's usage lines). What the man pages and shell completion read; the programs themselves
read their tables directly.

A program added to :data:`~xce.compat.programs.PROGRAMS` before its table is written still gets a
page and completion, from what its module declares (getopt's ``LONGS``/``SHORTS``, or the options
its ``USAGE`` names), without help lines: ``tests/compat/test_front_end_manuals.py`` asks for the
table.
"""

from __future__ import annotations

import importlib
import re

from xce.compat.optable import NONE, REQUIRED, Flag, Program
from xce.compat.programs import PROGRAMS, SLURM


def declared(name: str) -> bool:
    """Whether ``name`` has an option table of its own (with a help line for each option)."""
    from xce.compat.lsf import tables as lsf
    from xce.compat.slurm import tables as slurm

    return name in slurm.STATIC or name in slurm.BUILT or name in lsf.STATIC or name == "bsub"


def of(name: str) -> Program:
    """The declaration of the front-end ``name`` (KeyError for a name XCE does not provide)."""
    if name not in PROGRAMS:
        raise KeyError(name)
    module = importlib.import_module(PROGRAMS[name])
    if not declared(name):
        return _undeclared(name, module)
    if name in SLURM:
        from xce.compat.slurm.tables import program

        return program(name, getattr(module, "REFUSED", None))
    from xce.compat.lsf.tables import program

    return program(name, module.USAGE)


def _undeclared(name: str, module) -> Program:
    summary = re.sub(r"``[^`]*``:\s*", "", (module.__doc__ or name).strip().split("\n\n")[0]).replace("``", "")
    summary = " ".join(summary.split()).rstrip(".")
    system = "slurm" if name in SLURM else "lsf"
    usage = getattr(module, "USAGE", f"Usage: {name} [OPTIONS]").rstrip("\n")
    longs = getattr(module, "LONGS", None)
    if longs is not None:
        letters = {full: s for s, full in getattr(module, "SHORTS", {}).items()}
        flags = [Flag(n, letters.get(n, ""), takes) for n, takes in longs.items()]
    else:  # the options its usage names: [-f], [-q queue_name]
        found = dict(re.findall(r"(?<![\w-])-(\w+)(?: ([a-z_]+))?", usage))
        flags = [Flag(n, takes=REQUIRED if v else NONE, metavar=v) for n, v in found.items()]
    return Program(name, system, usage, summary, flags, refused=getattr(module, "REFUSED", None),
                   single_dash=longs is None)
