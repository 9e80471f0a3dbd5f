"""``bresume``: resume jobs bstop suspended (a held pending job is released)."""

from __future__ import annotations

from xce.compat.lsf import _act, tables
from xce.compat.lsf._args import main_of

USAGE = _act.usage_text("bresume")


def run(argv: list[str]) -> int:
    return _act.program("resume", argv, *tables.BRESUME.lsf(), fallback="release")


main = tables.with_help(main_of("bresume", USAGE, run), "bresume", USAGE)
