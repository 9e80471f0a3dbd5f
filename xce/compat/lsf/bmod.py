"""``bmod``: change a submitted job (``PATCH /v1/jobs/ID``): ``-q``, ``-P``, ``-J``, ``-n``, ``-R``,
``-W`` (``-Wn`` removes it), ``-o``, ``-e``, ``-b``, ``-w`` (``-wn``), ``-sp``, ``-M``, checked as
at submission; ``Parameters of job <N> are being changed`` as LSF answers."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, Usage, last, main_of, parse

USAGE = """Usage: bmod [-h] [-V] [-q "queue_name ..."] [-P project_name] [-J job_name] [-n num_tasks]
            [-R "res_req"] [-W [hour:]minute | -Wn] [-o out_file | -on] [-e err_file | -en]
            [-b [[year:][month:]day:]hour:minute | -bn] [-w "dependency_expression" | -wn]
            [-sp priority | -spn] [-M mem_limit | -Mn] jobId | "jobId[index]\""""
#: What the parser reads, -h prints and man shows (:mod:`xce.compat.lsf.tables`).
FLAGS, VALUED = tables.BMOD.lsf()


def _body(opts: dict) -> dict:
    import os

    from xce.cli.jobscript import Refused, lsf_memory, lsf_resreq, lsf_slots
    from xce.cli.submit import parse_begin, parse_run_limit
    from xce.compat.lsf._conf import unit_for_limits

    os.environ["LSF_UNIT_FOR_LIMITS"] = unit_for_limits()
    body: dict = {}
    try:
        for flag, key, read in (("q", "queue", lambda v: v.split()[0]), ("P", "project", str), ("J", "name", str),
                                ("n", "tasks", lambda v: int(lsf_slots(v))), ("R", "request", lsf_resreq),
                                ("W", "run_limit", parse_run_limit), ("o", "stdout", str), ("oo", "stdout", str),
                                ("e", "stderr", str), ("eo", "stderr", str), ("b", "begin_time", parse_begin),
                                ("w", "depend", str), ("sp", "priority", int)):
            if last(opts, flag) is not None:
                body[key] = read(last(opts, flag))
        if last(opts, "M") is not None:
            body["limits"] = {"mem": lsf_memory(last(opts, "M"))}
    except (Refused, ValueError) as exc:
        raise Failed(f"{exc}. Request aborted.") from None
    for flag, key, value in (("Wn", "run_limit", 0), ("wn", "depend", ""), ("bn", "begin_time", 0),
                             ("spn", "priority", 0), ("Mn", "limits", {"mem": 0})):
        if opts.get(flag):
            body[key] = value
    return body


def run(argv: list[str]) -> int:
    opts, words = parse(argv, FLAGS, VALUED)
    if len(words) != 1:
        raise Usage("" if not words else "give one job")
    from xce.compat.lsf import _jobs
    from xce.compat.lsf._client import connect, refusal, request

    text = _jobs.check_ids(words)[0]
    body = _body(opts)
    if not body:
        raise Usage("no parameter to change")
    client = connect()
    jobs = request(client, "GET", "/v1/jobs", params={"job": [text]})["jobs"]
    jobs = [j for j in jobs if _jobs.matches(text, j)]
    if not jobs:
        raise Failed(f"{text}: No matching job found")
    if len(jobs) > 1:
        raise Failed(f"{text}: an array: modify its elements one by one ({text}[INDEX])")
    _, refused = refusal(client, "PATCH", f"/v1/jobs/{jobs[0]['jobid']}", body)
    if refused:
        raise Failed("\n".join(f"{text}: {line}" for line in refused[1]) + "\nRequest aborted.")
    print(f"Parameters of job <{_jobs.long_id(jobs[0])}> are being changed")
    return 0


main = tables.with_help(main_of("bmod", USAGE, run), "bmod", USAGE)
