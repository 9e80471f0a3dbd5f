"""``bstop``: suspend jobs (a running job is stopped, USUSP; a pending one is held, PSUSP, as LSF does)."""

from __future__ import annotations

from xce.compat.lsf import _act
from xce.compat.lsf._args import main_of

USAGE = _act.usage_text("bstop")


def run(argv: list[str]) -> int:
    return _act.program("suspend", argv, frozenset(), frozenset(), fallback="hold")


main = main_of("bstop", USAGE, run)
