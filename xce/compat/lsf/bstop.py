"""``bstop``: suspend jobs (a running job is stopped, USUSP; a pending one is held, PSUSP, as LSF does)."""

from __future__ import annotations

from xce.compat.lsf import _act, tables
from xce.compat.lsf._args import main_of

USAGE = _act.usage_text("bstop")


def run(argv: list[str]) -> int:
    return _act.program("suspend", argv, *tables.BSTOP.lsf(), fallback="hold")


main = tables.with_help(main_of("bstop", USAGE, run), "bstop", USAGE)
