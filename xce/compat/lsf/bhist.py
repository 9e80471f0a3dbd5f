"""``bhist``: the time each job spent in each state (``-l``: every event of its history, then
that summary). Finished jobs are included with ``-a`` or ``-d``, or when named."""

from __future__ import annotations

import sys
import time

from xce.compat.lsf import _jobs, tables
from xce.compat.lsf._args import EXIT_FAIL, last, main_of, parse

USAGE = """Usage: bhist [-h] [-V] [-l [-aff] [-hostfile]] [-b] [-w] [-a | -d | -p | -r | -s] [-t]
             [-J job_name] [-q queue_name] [-u user_name | -u all] [-n num_logfiles]
             [jobId | "jobId[index_list]" ...]"""
#: What the parser reads, -h prints and man shows (:mod:`xce.compat.lsf.tables`).
FLAGS, VALUED = tables.BHIST.lsf()
#: A bhist of everything (``bhist -l -a``) reads at most this many jobs' histories.
MOST = 1000


def _short(details: list[dict], now: int, wide: bool) -> list[str]:
    from xce.compat.lsf._long import spent

    out = ["Summary of time in seconds spent in various states:",
           "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL"]
    for d in details:
        times = spent(d, now)
        name = _jobs.job_name(d)
        if len(name) > 9 and not wide:
            name = "*" + name[len(name) - 8:]
        row = [_jobs.long_id(d), d["user"], name, *map(str, times.values()), str(sum(times.values()))]
        out.append("".join(f"{v:<7} " if i != 2 else f"{v:<9} " for i, v in enumerate(row)).rstrip())
    return out


def run(argv: list[str]) -> int:
    from xce.compat.lsf._client import connect
    from xce.compat.lsf._long import SEPARATOR, bhist_block, details

    opts, words = parse(argv, FLAGS, VALUED)
    ids = _jobs.check_ids(words)
    states = ",".join(s for f, s in (("p", "PEND"), ("r", "RUN"), ("s", "USUSP,SSUSP")) if opts.get(f)) or None
    finished = "only" if opts.get("d") else "recent" if opts.get("a") else "no"
    client = connect()
    jobs = _jobs.listing(client, ids=ids, user=_jobs.one_user(opts), queue=last(opts, "q"), name=last(opts, "J"),
                         states=states, finished="all" if opts.get("a") and not ids else finished)[-MOST:]
    missing = _jobs.not_found(ids, jobs)
    for text in missing:
        print(f"{text}: No matching job found", file=sys.stderr)
    if not jobs:
        if not missing:
            print("No matching job found", file=sys.stderr)
        return EXIT_FAIL if missing else 0
    full = details(client, jobs)
    now = time.time_ns()
    if opts.get("l"):
        sys.stdout.write("".join("\n".join(bhist_block(d, now)) + "\n" + SEPARATOR + "\n" for d in full))
    else:
        print("\n".join(_short(full, now, bool(opts.get("w")))))
    return EXIT_FAIL if missing else 0


main = tables.with_help(main_of("bhist", USAGE, run), "bhist", USAGE)
