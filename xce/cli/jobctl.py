"""``xce kill|suspend|resume JOBID...`` and ``xce modify JOBID``: acting on submitted jobs."""

from __future__ import annotations

import sys
from functools import partial


from xce.cli.client import (EXIT_FAILED, EXIT_UNREACHABLE, EXIT_USAGE, ApiError, Unreachable, call, connect, describe,
                            fail, print_json)
from xce.cli.spec import JSON, Arg, Command, Opt, common_options

_DONE = {"kill": "is killed", "suspend": "is suspended", "resume": "is resumed"}


def act(verb: str, jobids: list[int], as_json: bool, url: str | None, token: str | None,
        state_dir: str | None) -> None:
    """Apply ``verb`` to each job; keep going past refusals, exit 1 if any was refused."""
    client = connect(url, token, state_dir)
    failed = False
    results: list[dict[str, Any]] = []
    for jobid in jobids:
        try:
            res = client.post(f"/v1/jobs/{jobid}/{verb}")
        except Unreachable as exc:
            fail(str(exc), EXIT_UNREACHABLE)
        except ApiError as exc:
            failed = True
            for line in describe(exc):
                print(f"xce: {line}", file=sys.stderr)
            results.append({"jobid": jobid, "error": exc.detail, "status": exc.status})
            continue
        results.append(res)
        if not as_json:
            print(f"Job <{jobid}> {_DONE[verb]}.")
    if as_json:
        print_json({"results": results})
    if failed:
        raise SystemExit(EXIT_FAILED)


def modify(jobid: int, priority: int | None, queue: str | None, project: str | None, as_json: bool,
           url: str | None, token: str | None, state_dir: str | None) -> None:
    body = {k: v for k, v in (("priority", priority), ("queue", queue), ("project", project)) if v is not None}
    if not body:
        fail("nothing to change: give --priority, -q or -P", EXIT_USAGE)
    res = call(connect(url, token, state_dir).patch, f"/v1/jobs/{jobid}", body)
    if as_json:
        print_json(res)
    else:
        print(f"Job <{jobid}>: priority {res['priority']}, queue <{res['queue']}>, project <{res['project']}>.")


def _verb(verb: str, help_text: str) -> Command:
    return Command(verb, help_text, [Arg("jobids", int, many=True, help="Job ids."), JSON, *common_options()],
                   partial(act, verb), examples=(f"xce {verb} 12", f"xce {verb} 12 13 14 --json"), quick_exit=True)


COMMAND_SPECS = [
    _verb("kill", "Kill jobs (pending jobs are removed, running ones are signalled)."),
    _verb("suspend", "Suspend running jobs (SIGSTOP; state USUSP)."),
    _verb("resume", "Resume suspended jobs (SIGCONT)."),
    Command("modify", "Change a job's priority, queue or project.",
            [Arg("jobid", int, help="Job id."),
             Opt("priority", ("--priority",), int, None, help="New user priority."),
             Opt("queue", ("-q", "--queue"), help="Move to this queue."),
             Opt("project", ("-P", "--project"), help="Charge this project."),
             JSON, *common_options()],
            modify, examples=("xce modify 12 --priority 10", "xce modify 12 -q high"), quick_exit=True),
]
