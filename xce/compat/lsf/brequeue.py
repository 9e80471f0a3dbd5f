"""``brequeue``: run jobs again under the same id, their history kept.

``-e``, ``-d``, ``-a`` and ``-r`` choose LSF's states to requeue from; XCE requeues a finished,
running or suspended job alike, so they are accepted and change nothing. ``-H`` holds each job
once requeued (PSUSP), as LSF does."""

from __future__ import annotations

from xce.compat.lsf import _act, tables
from xce.compat.lsf._args import main_of, parse

USAGE = _act.usage_text("brequeue", "[-a | -d | -e | -r] [-H] ")
FLAGS, VALUED = tables.BREQUEUE.lsf()


def run(argv: list[str]) -> int:
    status = _act.program("requeue", argv, FLAGS, VALUED)
    opts, words = parse(argv, FLAGS, VALUED)
    named = [w for w in words if w != "0"]
    if opts.get("H") and named:
        from xce.compat.lsf._client import connect

        _act.act(connect(), "hold", named, False, {})
    return status


main = tables.with_help(main_of("brequeue", USAGE, run), "brequeue", USAGE)
