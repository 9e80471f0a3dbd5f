"""``bjobs``: jobs as LSF lists them, from one filtered ``GET /v1/jobs``.

Named jobs (``12``, ``12[3]``, ``"12[1-5]"``) are listed whatever their state; a name that finds
nothing is ``Job <N> is not found`` on standard error and exit 255, but the others are still
listed (``-json`` lists it as a record with ``ERROR`` and exits 0). Without names: your
unfinished jobs, ``-a`` also those that ended in the last hour, ``-d`` only those, ``-p`` pending,
``-r`` running, ``-s`` suspended. ``-l`` is the long form (one request more per job).
"""

from __future__ import annotations

import sys

from xce.compat.lsf import _jobs, _table, tables
from xce.compat.lsf._args import EXIT_FAIL, Usage, last, main_of, parse
from xce.formats import lsf_short, printable

USAGE = """Usage: bjobs [-h] [-V] [-w | -l] [-a] [-d] [-p] [-r] [-s] [-noheader] [-json]
             [-o "field_name[:[-]output_width] ... [delimiter='character']"]
             [-J job_name] [-q queue_name] [-u user_name | -u all] [-m host_name] [-P project_name]
             [-UF] [-X] [-W] [-hms] [-G user_group] [-g job_group] [-app application_profile]
             [-sla service_class_name] [jobId | "jobId[index_list]" ...]"""

#: What the parser reads, -h prints and man shows (:mod:`xce.compat.lsf.tables`).
FLAGS, VALUED = tables.BJOBS.lsf()
_REFUSED = {"A": "array summaries", "sum": "summaries", "aps": "APS ordering", "N": "host normalisation",
            "U": "advance reservations", "Lp": "license projects"}
SEPARATOR = "-" * 78
#: The default columns and their widths; EXEC_HOST's continuation lines start under its column.
_DEFAULT = [("JOBID", 7), ("USER", 7), ("STAT", 5), ("QUEUE", 10), ("FROM_HOST", 11), ("EXEC_HOST", 11),
            ("JOB_NAME", 10), ("SUBMIT_TIME", 0)]
_EXEC_AT = sum(w + 1 for _, w in _DEFAULT[:5])


def _default_columns():
    return [_table.Column(f) for f in _table.DEFAULT]


def _states(opts: dict) -> str | None:
    views = [s for flag, s in (("p", "PEND"), ("r", "RUN"), ("s", "USUSP,SSUSP")) if opts.get(flag)]
    if opts.get("d"):
        views.append("DONE,EXIT")
    return ",".join(views) or None


def _fit(value: str, width: int, cut: bool) -> str:
    """A default column: padded to its width; longer, cut on the left behind ``*`` where ``cut``
    (LSF's way), else shown whole."""
    if len(value) <= width:
        return value.ljust(width)
    return "*" + value[len(value) - width + 1:] if cut else value


def _default_lines(jobs: list[dict], header: bool, wide: bool) -> list[str]:
    """One line a job (its further hosts on lines of their own unless ``wide``): a loop that runs
    10,000 times for ``bjobs -u all`` at a site, so each line is one format with the submit times
    formatted once a minute."""
    out = [" ".join(h.ljust(w) for h, w in _DEFAULT).rstrip()] if header else []
    cut = not wide
    minutes: dict[int, str] = {}
    stat = _table.FIELDS["stat"][3]
    for job in jobs:
        hosts = _jobs.hosts(job)
        first = (":".join(hosts) if wide else hosts[0]) if hosts else ""
        minute = job["submit_time"] // 60_000_000_000
        submitted = minutes.get(minute)
        if submitted is None:
            submitted = minutes[minute] = lsf_short(job["submit_time"])
        out.append(f"{_fit(_jobs.job_id(job), 7, False)} {_fit(job['user'], 7, cut)} {_fit(stat(job), 5, False)} "
                   f"{_fit(job['queue'], 10, cut)} {_fit(job.get('submit_host') or '-', 11, cut)} "
                   f"{_fit(first, 11, cut)} {_fit(printable(_jobs.job_name(job)), 10, cut)} {submitted}")
        if not wide and len(hosts) > 1:
            out += [" " * _EXEC_AT + h for h in hosts[1:]]
    return out


def _none_message(opts: dict, named: bool) -> str:
    if opts.get("J") and not opts.get("a"):
        return f"Job <{last(opts, 'J')}> is not found"
    if opts.get("a") or named:
        return "No job found"
    for flag, word in (("p", "pending"), ("r", "running"), ("s", "suspended"), ("d", "done")):
        if opts.get(flag) and sum(1 for f in "prsd" if opts.get(f)) == 1:
            return f"No {word} job found"
    return "No unfinished job found"


def run(argv: list[str]) -> int:
    opts, words = parse(argv, FLAGS, VALUED)
    refused = [f for f in _REFUSED if opts.get(f)]
    if refused:
        raise Usage(f"-{refused[0]}: {_REFUSED[refused[0]]} are not available on this cluster")
    if opts.get("l") and opts.get("w"):
        raise Usage("-l and -w cannot be used together")
    ids = _jobs.check_ids(words)
    columns = delimiter = None
    if opts.get("o"):
        columns, delimiter = _table.parse_format(last(opts, "o"))
    user = _jobs.one_user(opts)
    client = _jobs_client()
    finished = "only" if opts.get("d") and not (opts.get("p") or opts.get("r") or opts.get("s")) else \
        "recent" if opts.get("a") or opts.get("d") else "no"
    jobs = _jobs.listing(client, ids=ids, user=user, queue=last(opts, "q"), name=last(opts, "J"),
                         states=None if opts.get("a") else _states(opts), finished=finished,
                         columns=None if opts.get("l") else _table.needs(columns or _default_columns()))
    jobs = _narrow(jobs, opts)
    missing = _jobs.not_found(ids, jobs)
    if opts.get("json"):
        sys.stdout.write(_table.json_text("bjobs", columns or _default_columns(), jobs,
                                          missing))
        return 0
    for text in missing:
        print(f"Job <{text}> is not found", file=sys.stderr)
    if jobs:
        if opts.get("l"):
            from xce.compat.lsf._long import bjobs_long

            sys.stdout.write(bjobs_long(client, jobs))
        elif columns:
            print("\n".join(_table.lines(columns, jobs, header=not opts.get("noheader"), delimiter=delimiter,
                                         wide=bool(opts.get("w")))))
        else:
            print("\n".join(_default_lines(jobs, not opts.get("noheader"), bool(opts.get("w")))))
    elif not missing:
        print(_none_message(opts, bool(ids)), file=sys.stderr)
    return EXIT_FAIL if missing else 0


def _narrow(jobs: list[dict], opts: dict) -> list[dict]:
    """``-m HOST`` and ``-P PROJECT``, which the API does not filter, on the jobs already read."""
    host, project = last(opts, "m"), last(opts, "P")
    if host:
        jobs = [j for j in jobs if any(p["host"] == host for p in j.get("placement") or [])]
    if project:
        jobs = [j for j in jobs if j.get("project") == project]
    return jobs


def _jobs_client():
    from xce.compat.lsf._client import connect

    return connect()


main = tables.with_help(main_of("bjobs", USAGE, run), "bjobs", USAGE)
