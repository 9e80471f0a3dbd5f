"""``xce acct``: finished jobs of a window and their totals, like LSF's ``bacct`` and Slurm's ``sacct``.

A job counts in the window it ended in. Times take the grammar of ``xce workload export``: a
duration ago (``7d``, ``36h``) or an ISO date/time (UTC unless it names a zone). ``--csv`` writes
times as ISO 8601 in UTC (``2026-12-03T13:03:27.512Z``), which spreadsheets and data frames read as
times, and durations in seconds; a job that never started shows the exit code every command shows
for it (:func:`xce.endcodes.exit_code_of`).
"""

from __future__ import annotations

import sys
from typing import Any

from xce.cli.client import EXIT_USAGE, call, connect, fail, print_json
from xce.cli.spec import JSON, Command, Opt, common_options

#: Columns of ``--csv``, in order: the JSON fields a spreadsheet wants, one job a line.
CSV_FIELDS = ("jobid", "user", "queue", "project", "job_type", "state", "exit_code", "exit_signal", "tasks",
              "submit_time", "start_time", "end_time", "wait_s", "run_s", "cpu_s", "mem_peak", "cpu_ms", "mem_avg")


#: The ``--csv`` columns that are times (nanoseconds in the API).
CSV_TIMES = frozenset({"submit_time", "start_time", "end_time"})


def _exit_code(job: dict[str, Any]) -> int | None:
    from xce.endcodes import exit_code_of

    return exit_code_of(job["exit_code"], (job.get("end") or {}).get("code"))


def _exit(job: dict[str, Any]) -> str:
    if job["exit_signal"]:
        return str(job["exit_signal"])
    code = _exit_code(job)
    return "-" if code is None else str(code)


def _csv_value(job: dict[str, Any], field: str) -> Any:
    from xce.formats import utc_millisecond

    value = _exit_code(job) if field == "exit_code" else job[field]
    if value is None:
        return ""
    return utc_millisecond(value / 1e9) if field in CSV_TIMES else value


def _cpu(seconds: float | None) -> str:
    """CPU time to the hundredth of a second below a minute (a short job's 0.95 s is not 1s), else as
    the other durations."""
    from xce.formats import compact

    return f"{seconds:.2f}s" if seconds is not None and seconds < 60 else compact(seconds)


def _window(since: str | None, until: str | None) -> tuple[int, int | None]:
    from xce.cli.whatif_cmd import parse_when

    try:
        a = parse_when(since) if since else 0
        b = parse_when(until) if until else None
    except ValueError as exc:
        fail(f"-S/-E: {exc}", EXIT_USAGE)
    if b is not None and b <= a:
        fail(f"-E ({until}) is not after -S ({since})", EXIT_USAGE)
    return a, b


def acct(since: str | None, until: str | None, user: str | None, queue: str | None, project: str | None,
         as_json: bool, as_csv: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    if as_json and as_csv:
        fail("--json and --csv are two answers: choose one", EXIT_USAGE)
    a, b = _window(since, until)
    res = call(connect(url, token, state_dir).get, "/v1/acct", since=a, until=b, user=user, queue=queue,
               project=project)
    if as_json:
        print_json(res)
        return
    if as_csv:
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(CSV_FIELDS)
        for job in res["jobs"]:
            w.writerow([_csv_value(job, f) for f in CSV_FIELDS])
        return
    from xce.cli.output import table
    from xce.formats import compact, size

    jobs = res["jobs"]
    if jobs:
        table(["JOBID", "USER", "QUEUE", "PROJECT", "STATE", "EXIT", "TASKS", "WAIT", "RUN", "CPU", "MEM PEAK",
               "MEM AVG"],
              [[j["jobid"] if j["array_index"] is None else f"{j['array_id']}[{j['array_index']}]", j["user"],
                j["queue"], j["project"], j["state"], _exit(j), j["tasks"], compact(j["wait_s"]),
                compact(j["run_s"]), _cpu(j["cpu_s"]),
                size(j["mem_peak"]), size(j.get("mem_avg"))] for j in jobs])
    t = res["totals"]
    if not t["jobs"]:
        print("No finished job in this window.")
        return
    print(f"\nJobs: {t['jobs']} (DONE {t['done']}, EXIT {t['exit']})   slot-hours: {t['slot_hours']:.2f}   "
          f"mean wait: {compact(t['mean_wait_s'])}   mean run: {compact(t['mean_run_s'])}   "
          f"CPU hours: {t['cpu_hours']:.2f}")
    if res["truncated"]:
        print(f"(only the first {len(jobs)} jobs are listed; the totals cover all {t['jobs']})")


ACCT = Command(
    "acct", "Finished jobs that ended in a window, with wait, run and CPU time, memory peak and average, exit "
    "status and totals (like bacct and sacct). Your own jobs unless -u.",
    [
        Opt("since", ("-S", "--since"), metavar="WHEN",
            help="Start of the window: a duration ago (7d, 36h, 90m) or an ISO date/time (UTC by default). "
                 "Default: all finished jobs kept."),
        Opt("until", ("-E", "--until"), metavar="WHEN", help="End of the window (default: now)."),
        Opt("user", ("-u", "--user"), metavar="USER", help="Only this user's jobs, or 'all' (default: your own).",
            complete="users"),
        Opt("queue", ("-q", "--queue"), help="Only jobs of this queue.", complete="queues"),
        Opt("project", ("-P", "--project"), help="Only jobs charged to this project."),
        JSON,
        Opt("as_csv", ("--csv",), bool, False, help="Print one CSV line per job (with a header line): times in ISO 8601, UTC; durations in seconds."),
        *common_options(),
    ],
    acct,
    quick_exit=True,
    examples=("xce acct -S 7d", "xce acct -S 2026-11-01 -E 2026-12-01 -u all -q normal --csv > november.csv",
              "xce acct -P chem -u all --json"),
)

COMMAND_SPECS = [ACCT]
