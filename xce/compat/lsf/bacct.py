"""``bacct``: accounting of finished jobs (``-l``: per job, ``Completed <done>``/``<exit>`` and its
figures), then LSF's SUMMARY; all your finished jobs from ``GET /v1/acct``, or the jobs named."""

from __future__ import annotations

import sys

from xce.compat.lsf import _jobs, tables
from xce.compat.lsf._args import EXIT_FAIL, last, main_of, parse

USAGE = """Usage: bacct [-h] [-V] [-b | -l [-aff] [-gpu]] [-d] [-e] [-w] [-q queue_name ...] [-P project_name ...]
             [-u user_name ... | -u all] [jobId | "jobId[index_list]" ...]"""
#: What the parser reads, -h prints and man shows (:mod:`xce.compat.lsf.tables`).
FLAGS, VALUED = tables.BACCT.lsf()


def _figures(d: dict) -> tuple[float, int, int]:
    from xce.compat.lsf._long import _cpu

    submit = d["submit_time"]
    start, end = d.get("start_time") or d.get("end_time") or submit, d.get("end_time") or submit
    return _cpu(d), max(0, (start - submit) // 10**9), max(0, (end - submit) // 10**9)


def summary(details: list[dict]) -> list[str]:
    figures = [_figures(d) for d in details]
    done = sum(1 for d in details if d["state"] == "DONE")
    cpus, waits, turns = ([f[i] for f in figures] or [0] for i in range(3))
    hogs = [c / t if t else 0.0 for c, _, t in figures] or [0.0]
    n = max(1, len(figures))
    return ["", "SUMMARY:      ( time unit: second ) ",
            f" Total number of done jobs:{done:8d}      Total number of exited jobs:{len(details) - done:6d}",
            f" Total CPU time consumed:{sum(cpus):10.1f}      Average CPU time consumed:{sum(cpus) / n:8.1f}",
            f" Maximum CPU time of a job:{max(cpus):8.1f}      Minimum CPU time of a job:{min(cpus):8.1f}",
            f" Total wait time in queues:{sum(waits):8.1f}",
            f" Average wait time in queue:{sum(waits) / n:7.1f}",
            f" Maximum wait time in queue:{max(waits):7.1f}      Minimum wait time in queue:{min(waits):7.1f}",
            f" Average turnaround time:{sum(turns) // n:10d} (seconds/job)",
            f" Maximum turnaround time:{max(turns):10d}      Minimum turnaround time:{min(turns):10d}",
            f" Average hog factor of a job:{sum(hogs) / n:6.2f} ( cpu time / turnaround time )",
            f" Maximum hog factor of a job:{max(hogs):6.2f}      Minimum hog factor of a job:{min(hogs):6.2f}"]


def _from_acct(record: dict) -> dict:
    """A ``/v1/acct`` record in the shape of a job's details (its usage as the long forms read it)."""
    used = {"cpu_ms": record.get("cpu_ms"), "mem_peak": record.get("mem_peak"), "mem_avg": record.get("mem_avg")}
    return {**record, "used": used, "name": record.get("name"), "held_by": None}


def run(argv: list[str]) -> int:
    from xce.compat.lsf._client import connect, request
    from xce.compat.lsf._long import SEPARATOR, bacct_block, details

    opts, words = parse(argv, FLAGS, VALUED)
    ids = _jobs.check_ids(words)
    user = _jobs.one_user(opts)
    client = connect()
    missing: list[str] = []
    if ids:
        jobs = _jobs.listing(client, ids=ids, user=user)
        missing = _jobs.not_found(ids, jobs)
        full = [d for d in details(client, jobs) if d["state"] in ("DONE", "EXIT")]
    else:
        found = request(client, "GET", "/v1/acct", params={"user": user, "queue": last(opts, "q"),
                                                           "project": last(opts, "P")})
        full = [_from_acct(r) for r in found["jobs"]]
    for text in missing:
        print(f"{text}: No matching job found", file=sys.stderr)
    who = user or _jobs.me()
    lines = ["", "Accounting information about jobs that are: ",
             f"  - submitted by {'all users' if who == 'all' else 'users ' + who}.",
             "  - accounted on all projects.", "  - completed normally or exited",
             "  - executed on all hosts.",
             f"  - submitted to {'queue ' + last(opts, 'q') if last(opts, 'q') else 'all queues'}.",
             "  - accounted on all service classes.", SEPARATOR]
    if opts.get("l"):
        for d in full:
            lines += bacct_block(d) + [SEPARATOR]
    if not full:
        print("No matching job found", file=sys.stderr)
        return EXIT_FAIL if missing else 0
    print("\n".join(lines + summary(full)))
    return EXIT_FAIL if missing else 0


main = tables.with_help(main_of("bacct", USAGE, run), "bacct", USAGE)
