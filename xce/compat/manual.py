"""Each front-end's declaration, complete: its option table (:mod:`xce.compat.slurm.tables`,
:mod:`xce.compat.lsf.tables`) with what only the program's module holds (the reasons it refuses
options, LSF's usage lines). What the man pages and shell completion read; the programs themselves
read their tables directly.
"""

from __future__ import annotations

import importlib

from xce.compat.optable import Program
from xce.compat.programs import LSF, PROGRAMS, SLURM


def of(name: str) -> Program:
    """The declaration of the front-end ``name`` (KeyError for a name XCE does not provide)."""
    if name not in SLURM and name not in LSF:
        raise KeyError(name)
    module = importlib.import_module(PROGRAMS[name])
    if name in SLURM:
        from xce.compat.slurm.tables import program

        return program(name, getattr(module, "REFUSED", None))
    from xce.compat.lsf.tables import program

    return program(name, module.USAGE)
