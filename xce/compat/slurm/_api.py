"""The controller, as a Slurm front-end asks it: one filtered ``GET /v1/jobs`` per status command.

Address and identity are found as ``xce`` finds them (:func:`xce.cli.client.connect`); a refused or
failed request ends the program with Slurm's ``PROG: error: ...`` line and exit 1."""

from __future__ import annotations

import sys

#: Slurm's ``MinJobAge``: how long an ended job still shows in ``squeue`` (``scontrol show config``).
MIN_JOB_AGE = 300
#: The most jobs one answer holds (the API's bound); a listing of more is read page after page.
MAX_LIST = 100_000


class Failed(Exception):
    """The request failed; the message is for ``PROG: error: ``."""


def client():
    """The controller's client; a controller that does not answer yet (restarting) is retried, said
    once as Slurm's clients say it."""
    import os

    from xce.cli.client import connect

    c = connect()
    prog = os.path.splitext(os.path.basename(sys.argv[0]))[0] or "slurm"
    c.on_retry = lambda why: _say(f"{prog}: error: Slurm controller not responding, sleeping and retrying.")
    return c


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def request(c, method: str, path: str, body=None, **params):
    """The answer, or :class:`Failed` with the controller's sentence."""
    from xce.cli.client import ApiError, Unreachable, describe

    try:
        if method == "GET":
            return c.request("GET", path, params=params)
        return c.request(method, path, body=body)
    except ApiError as exc:
        raise Failed("; ".join(describe(exc))) from None
    except Unreachable as exc:
        raise Failed(f"Unable to contact slurm controller (connect failure): {exc}") from None


def jobs(c, columns=None, **params) -> dict:
    """``GET /v1/jobs`` with ``params`` (lists repeat the parameter): every job that matches, however
    many, read a page of ``limit`` at a time after the last id of the one before, so that a listing
    is never cut short. ``columns``: only these (the compact answer; ``jobid`` is always read, the
    pages follow it), each job a dict of them; None: whole jobs (``--json``)."""
    from xce.cli.client import uncollected

    return uncollected(_jobs, c, columns, params)


def _jobs(c, columns, params: dict) -> dict:
    from xce.cli.client import jobs_of

    params.setdefault("limit", MAX_LIST)
    params = {k: v for k, v in params.items() if v is not None}
    if columns is not None:
        params["columns"] = ",".join(sorted({"jobid", *columns}))
    answer = request(c, "GET", "/v1/jobs", **params)
    found = jobs_of(answer)
    while answer.get("truncated") and found:
        answer = request(c, "GET", "/v1/jobs", **{**params, "after": found[-1]["jobid"]})
        page = jobs_of(answer)
        if not page:
            break
        found += page
    return {"jobs": found, "truncated": False, "errors": answer.get("errors") or []}


def partitions(c) -> tuple[list[dict], list[dict]]:
    """The queues and the hosts, what ``sinfo`` and ``scontrol show partition`` both describe."""
    return request(c, "GET", "/v1/queues")["queues"], request(c, "GET", "/v1/hosts")["hosts"]


def fail(prog: str, exc: Exception, code: int = 1) -> int:
    sys.stderr.write(f"{prog}: error: {exc}\n")
    return code
