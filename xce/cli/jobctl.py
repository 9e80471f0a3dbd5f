"""``xce kill|suspend|resume|hold|release JOB...`` and ``xce modify JOB``: acting on submitted jobs."""

from __future__ import annotations

import sys
from functools import partial

from xce.cli.client import EXIT_FAILED, EXIT_USAGE, call, connect, fail, print_json
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.cli.submit import parse_begin, parse_pairs, parse_run_limit, parse_time
from xce.formats import hms
from xce.jobref import ref_arg


def _job(text: str) -> str:
    """A job as people write it, or ``0`` (all of yours, as ``bkill 0``)."""
    return "0" if text.strip() == "0" else ref_arg(text)


def act(verb: str, jobids: list[str] | None, as_json: bool, url: str | None, token: str | None,
        state_dir: str | None, signal: str | None = None, queue: str | None = None, name: str | None = None,
        orphans: bool = False, user: str | None = None) -> None:
    """Apply ``verb`` to every job named (``12``, ``12[3]``, ``12[1-5]``, ``NAME``, ``0`` for all of
    yours, ``-q``, ``-J``): one line per job; exit 1 if any was refused."""
    refs = list(jobids or ())
    everything = "0" in refs
    refs = [r for r in refs if r != "0"]
    if not (refs or everything or queue or name or orphans):
        fail(f"{verb}: name the jobs (ids, ID[INDEX], names; 0 for all of yours; -q QUEUE; -J NAME)", EXIT_USAGE)
    body = {"action": verb, "jobs": refs, "all": everything}
    if orphans:
        body["orphans"] = True
    for key, value in (("signal", signal), ("queue", queue), ("name", name), ("user", user)):
        if value is not None:
            body[key] = value
    res = call(connect(url, token, state_dir).post, "/v1/jobs/act", body)
    results = res["results"]
    if as_json:
        print_json(res)
    else:
        for r in results:
            print(r["message"] if r["ok"] else f"xce: {r['message']}", file=sys.stdout if r["ok"] else sys.stderr)
        if not results:
            print("No unfinished job found", file=sys.stderr)
    if not results or any(not r["ok"] for r in results):
        raise SystemExit(EXIT_FAILED)


def _run_limit(text: str) -> int:
    """``-W`` as at submission, or ``0``: back to the queue's default (LSF ``bmod -Wn``)."""
    return 0 if text.strip() == "0" else parse_run_limit(text)


def _time(text: str) -> int:
    return 0 if text.strip() == "0" else parse_time(text)


def _one_job(client, text: str) -> int:
    """The id of the one job ``text`` names (``12``, ``12[3]``, ``NAME``), as ``xce kill`` reads it: a
    modification is checked against one job, so a reference to several is refused."""
    if text.isdigit():
        return int(text)
    listing = call(client.get, "/v1/jobs", job=text, all="true")
    for problem in listing.get("errors") or []:
        fail(problem, EXIT_FAILED)
    ids = [j["jobid"] for j in listing["jobs"]]
    if len(ids) != 1:
        fail(f"modify: {text} names {len(ids)} jobs ({', '.join(map(str, ids[:10]))}"
             f"{' ...' if len(ids) > 10 else ''}); give one, as ID[INDEX] for an array element", EXIT_FAILED)
    return ids[0]


def modify(jobid: str, priority: int | None, queue: str | None, project: str | None, name: str | None,
           tasks: int | None, request: str | None, stdout: str | None, stderr: str | None, begin: int | None,
           depend: str | None, as_json: bool, url: str | None, token: str | None, state_dir: str | None,
           run_limit: int | None = None, time: int | None = None, requests: list[str] | None = None,
           limits: list[str] | None = None) -> None:
    if run_limit is not None and time is not None:
        fail("modify: -W and --time both set a run limit; give one", EXIT_USAGE)
    body = {k: v for k, v in (("priority", priority), ("queue", queue), ("project", project), ("name", name),
                              ("tasks", tasks), ("request", request), ("stdout", stdout), ("stderr", stderr),
                              ("begin_time", begin), ("depend", depend),
                              ("run_limit", run_limit if time is None else time)) if v is not None}
    if requests:
        body["requests"] = parse_pairs("--request", requests)
    if limits:
        body["limits"] = parse_pairs("--limit", limits)
    if not body:
        fail("nothing to change: give --priority, -q, -P, -J, -n, -R, -W, --time, --request, --limit, -o, -e, -b "
             "or -w", EXIT_USAGE)
    client = connect(url, token, state_dir)
    jobid = _one_job(client, jobid)
    res = call(client.patch, f"/v1/jobs/{jobid}", body)
    if as_json:
        print_json(res)
    elif "run_limit" in body:
        print(f"Job <{jobid}>: {_limit_text(call(client.get, f'/v1/jobs/{jobid}').get('run_limit'))}, "
              f"priority {res['priority']}, queue <{res['queue']}>, project <{res['project']}>.")
    else:
        print(f"Job <{jobid}>: priority {res['priority']}, queue <{res['queue']}>, project <{res['project']}>.")


def _limit_text(seconds: int | None) -> str:
    """The run limit now in force (``-W 0`` gives the queue's default, which the answer alone does not say)."""
    if not seconds:
        return "no run limit"
    return f"run limit {hms(seconds)}"


_JOBS = Arg("jobids", _job, many=True, required=False, metavar="JOB", complete="jobs",
             help="Job ids, ID[INDEX] or ID[1-5] (array elements), or job names; 0: all of your unfinished jobs.")
_SCOPE = (Opt("queue", ("-q", "--queue"), help="Only jobs of this queue (alone: all of yours in it).",
              complete="queues"),
          Opt("name", ("-J", "--job-name"),
              help="Only jobs of this name, '*' matching any run of characters (alone: all of yours with it).",
              metavar="NAME"),
          Opt("user", ("-u", "--user"), metavar="USER", complete="users",
              help="Admins: with 0, -q or -J, this user's jobs instead of yours; 'all' for everyone's."))


def _verb(verb: str, help_text: str, *extra: Opt) -> Command:
    return Command(verb, help_text, [_JOBS, *extra, *_SCOPE, JSON, *common_options()], partial(act, verb),
                   examples=(f"xce {verb} 12", f"xce {verb} 12[1-5] sweep", f"xce {verb} 0 -q short"),
                   quick_exit=True)


COMMAND_SPECS = [
    _verb("kill", "Kill jobs (pending jobs are removed, running ones are signalled); with -s, only send a signal.",
          Opt("signal", ("-s", "--signal"), help="Send this signal (SIGUSR1, USR1, 10) instead of killing.",
              metavar="SIGNAL"),
          Opt("orphans", ("--orphans",), bool, False,
              help="Your pending jobs whose dependency can never be met (xce jobs -p names them).")),
    _verb("suspend", "Suspend running jobs (SIGSTOP; state USUSP)."),
    _verb("resume", "Resume suspended jobs (SIGCONT)."),
    _verb("hold", "Hold pending jobs: they stay PEND and are not started until released (LSF bhold)."),
    _verb("release", "Release held jobs (LSF brelease)."),
    _verb("requeue", "Run jobs again under the same id, their history kept (LSF brequeue): a finished one pends at once; "
          "a running one is stopped first and pends once its processes have ended."),
    Command("modify", "Change a job's priority, queue, project or run limit; while it pends also its name, tasks, "
            "requirement, requests, limits, output files, begin time and dependency, checked as at submission "
            "(LSF bmod, Slurm scontrol update).",
            [Arg("jobid", ref_arg, metavar="JOB", help="Job id, ID[INDEX] (an array element) or job name.",
                 complete="jobs"),
             Opt("priority", ("--priority",), int, None, help="New user priority."),
             Opt("queue", ("-q", "--queue"), help="Move to this queue.", complete="queues"),
             Opt("project", ("-P", "--project"), help="Charge this project."),
             Opt("name", ("-J", "--job-name"), help="New name (pending jobs).", metavar="NAME"),
             Opt("tasks", ("-n", "--tasks"), int, None, min=1, metavar="N", help="New task count (pending jobs)."),
             Opt("request", ("-R", "--resreq"), help="New resource requirement (pending jobs)."),
             Opt("stdout", ("-o",), metavar="FILE", help="New output file (pending jobs)."),
             Opt("stderr", ("-e",), metavar="FILE", help="New error file (pending jobs)."),
             Opt("begin", ("-b", "--begin"), parse_begin, None, metavar="TIME",
                 help="New begin time (pending jobs); +0s lets it start now."),
             Opt("depend", ("-w", "--depend"), metavar="EXPR", help="New dependency; '' removes it (pending jobs)."),
             Opt("run_limit", ("-W",), _run_limit, None, metavar="[HH:]MM",
                 help="New run limit, also of a running job (counted from its start); 0: the queue's default."),
             Opt("time", ("--time",), _time, None, metavar="TIME",
                 help="New run limit as sbatch writes it (MINUTES, HH:MM:SS, DAYS-HH...); 0: the queue's default."),
             Opt("requests", ("--request",), multiple=True, metavar="NAME=QTY",
                 help="Reserve NAME=QTY instead (pending jobs; others kept); NAME=0 removes it."),
             Opt("limits", ("--limit",), multiple=True, metavar="NAME=QTY",
                 help="Cap NAME=QTY instead (pending jobs; others kept); NAME=0 removes it."),
             JSON, *common_options()],
            modify, examples=("xce modify 12 --priority 10", "xce modify 12 -q high", "xce modify 12 -W 2:00",
                              "xce modify 12 --request mem=8G --limit mem=10G"), quick_exit=True),
]
