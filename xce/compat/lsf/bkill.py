"""``bkill``: kill or signal jobs (``-s SIG``, by name or number); ``bkill 0`` all of yours."""

from __future__ import annotations

import sys

from xce.compat.lsf import _act, _jobs, tables
from xce.compat.lsf._args import EXIT_FAIL, Usage, last, main_of, parse

USAGE = _act.usage_text("bkill", "[-l] [-r] [-s signal_value | -s signal_name] ")
#: What the parser reads, -h prints and man shows (:mod:`xce.compat.lsf.tables`).
FLAGS, VALUED = tables.BKILL.lsf()
SIGNAL_NAMES = ("HUP INT QUIT ILL TRAP ABRT EMT FPE KILL BUS SEGV SYS PIPE ALRM TERM URG STOP TSTP CONT CHLD "
                "TTIN TTOU IO XCPU XFSZ VTALRM PROF WINCH USR1 USR2")


def run(argv: list[str]) -> int:
    opts, words = parse(argv, FLAGS, VALUED)
    if opts.get("l"):
        print(SIGNAL_NAMES)
        return 0
    if opts.get("m"):
        raise Usage("-m: killing by execution host is not available on this cluster")
    everything = "0" in words
    ids = _jobs.check_ids([w for w in words if w != "0"])
    if not (ids or everything or opts.get("J") or opts.get("q")):
        raise Usage("")
    signal = last(opts, "s")
    from xce.compat.lsf._client import connect

    results = _act.act(connect(), "kill", ids, everything, opts, signal=_signal(signal))
    if not results:
        print("No unfinished job found" if everything or not ids else "No matching job found", file=sys.stderr)
        return EXIT_FAIL
    ending = signal is None or _signal(signal) in ("SIGKILL", "SIGTERM", "SIGINT")
    return _act.report(results, _act.DOING["kill" if ending else "signal"], ids)


def _signal(text: str | None) -> str | None:
    """``-s 9``, ``-s KILL``, ``-s SIGKILL`` as the API names it."""
    if text is None:
        return None
    from xce.signals import parse_signal

    try:
        sig = parse_signal(text)
    except ValueError:
        sig = None
    if sig is None:
        raise Usage(f"{text}: Illegal signal value")
    return sig.name


main = tables.with_help(main_of("bkill", USAGE, run), "bkill", USAGE)
