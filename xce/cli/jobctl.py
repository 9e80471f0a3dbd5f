"""``xce kill|suspend|resume JOBID...`` and ``xce modify JOBID``: acting on submitted jobs."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from xce.cli.client import (EXIT_FAILED, EXIT_UNREACHABLE, EXIT_USAGE, ApiError, JsonOpt, StateDirOpt, TokenOpt,
                            Unreachable, UrlOpt, call, connect, describe, fail, print_json)

JobIds = Annotated[list[int], typer.Argument(help="Job ids.", show_default=False)]
_DONE = {"kill": "is killed", "suspend": "is suspended", "resume": "is resumed"}


def _act(verb: str, jobids: list[int], as_json: bool, url, token, state_dir) -> None:
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
        raise typer.Exit(EXIT_FAILED)


def register(app: typer.Typer) -> None:
    @app.command(help="Kill jobs (pending jobs are removed, running ones are signalled).")
    def kill(jobids: JobIds, as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None,
             state_dir: StateDirOpt = None) -> None:
        _act("kill", jobids, as_json, url, token, state_dir)

    @app.command(help="Suspend running jobs (SIGSTOP; state USUSP).")
    def suspend(jobids: JobIds, as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None,
                state_dir: StateDirOpt = None) -> None:
        _act("suspend", jobids, as_json, url, token, state_dir)

    @app.command(help="Resume suspended jobs (SIGCONT).")
    def resume(jobids: JobIds, as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None,
               state_dir: StateDirOpt = None) -> None:
        _act("resume", jobids, as_json, url, token, state_dir)

    @app.command(help="Change a job's priority, queue or project.")
    def modify(
        jobid: Annotated[int, typer.Argument(help="Job id.", show_default=False)],
        priority: Annotated[int | None, typer.Option("--priority", help="New user priority.")] = None,
        queue: Annotated[str | None, typer.Option("-q", "--queue", help="Move to this queue.")] = None,
        project: Annotated[str | None, typer.Option("-P", "--project", help="Charge this project.")] = None,
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        body = {k: v for k, v in (("priority", priority), ("queue", queue), ("project", project)) if v is not None}
        if not body:
            fail("nothing to change: give --priority, -q or -P", EXIT_USAGE)
        res = call(connect(url, token, state_dir).patch, f"/v1/jobs/{jobid}", body)
        if as_json:
            print_json(res)
        else:
            print(f"Job <{jobid}>: priority {res['priority']}, queue <{res['queue']}>, project <{res['project']}>.")
