"""``bqueues``: queues with LSF's columns (``-w`` names not cut, ``-l`` a block per queue)."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, main_of, parse

USAGE = "Usage: bqueues [-h] [-V] [-w | -l] [-m host_name] [-u user_name] [queue_name ...]"
HEADER = "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP "


def _status(q: dict) -> str:
    return f"{'Open' if q['status'] == 'open' and not q.get('closed_reason') else 'Closed'}:" \
           f"{'Active' if q.get('active', True) else 'Inact'}"


def _n(value) -> str:
    return "-" if value in (None, 0) else str(value)


def row(q: dict, wide: bool) -> str:
    jobs = q.get("jobs") or {}
    name = q["name"] if wide or len(q["name"]) <= 15 else q["name"][:14] + "*"
    susp = jobs.get("SSUSP", 0) + jobs.get("USUSP", 0)
    return (f"{name:<16}{q['priority']:>3}  {_status(q):<16}{_n(q.get('max_running')):>3}"
            f"{_n(q.get('max_running_per_user')):>5}{'-':>5}{'-':>5}{q.get('njobs', 0):>6}{jobs.get('PEND', 0):>6}"
            f"{jobs.get('RUN', 0):>6}{susp:>6}")


def long_block(q: dict) -> str:
    jobs = q.get("jobs") or {}
    limit = q.get("run_limit") or q.get("max_run_limit")
    lines = ["", f"QUEUE: {q['name']}", f"  -- {q.get('description') or 'No description provided.'}"
             + ("  This is the default queue." if q.get("default") else ""), "",
             "PARAMETERS/STATISTICS",
             "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS",
             f"{q['priority']:>4}{0:>5}  {_status(q):<16}{_n(q.get('max_running')):>3}"
             f"{_n(q.get('max_running_per_user')):>5}{'-':>5}{'-':>5}{q.get('njobs', 0):>6}{jobs.get('PEND', 0):>6}"
             f"{jobs.get('RUN', 0):>6}{jobs.get('SSUSP', 0):>6}{jobs.get('USUSP', 0):>6}{0:>5}{jobs.get('PEND', 0):>6}"]
    if limit:
        lines += ["", " RUNLIMIT", f" {limit / 60:.1f} min"]
    lines += ["", "SCHEDULING PARAMETERS", "", "USERS: all", "HOSTS:  all"]
    return "\n".join(lines)


def run(argv: list[str]) -> int:
    opts, names = parse(argv, *tables.BQUEUES.lsf())
    from xce.compat.lsf._client import connect, request

    queues = request(connect(), "GET", "/v1/queues")["queues"]
    unknown = [n for n in names if n not in {q["name"] for q in queues}]
    if unknown:
        raise Failed(f"{unknown[0]}: No such queue")
    queues = [q for q in queues if not names or q["name"] in names]
    if opts.get("l"):
        print("\n".join(long_block(q) for q in queues))
    else:
        print("\n".join([HEADER] + [row(q, bool(opts.get("w"))) for q in queues]))
    return 0


main = tables.with_help(main_of("bqueues", USAGE, run), "bqueues", USAGE)
