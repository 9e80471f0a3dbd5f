"""Attaching to an interactive job's terminal (``xce submit -I``/``-Is``): owner or admin only.

The terminal lives in the worker of the job's head host (:mod:`xce.worker.interactive`), which
serves it on its task server's port to whoever proves an attach key for the job. Keys are made
here, one per request, for the job's owner or an admin only, and go to the head host in an
``attach`` action over the worker's authenticated poll, never to anyone else: another user cannot
get one, and a key opens one attach of this run of this job, nothing more.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from xce.controller.api.responses import COMMON, JobId, ctl_of, documented, json_response
from xce.controller.auth.security import people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict
from xce.controller.jobs import control
from xce.controller.service import Controller
from xce.core.specs import DONE, EXIT, PEND, RUN, SSUSP, USUSP
from xce.endcodes import NOT_STARTED
from xce.protocol.actions import AttachKey

#: How long after its start a job that ended before its user attached still has its terminal (its
#: output and exit status) on its head host: the worker's ``xce.worker.interactive.ATTACH_WITHIN_S``.
ENDED_TERMINAL_S = 60

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=COMMON)
Caller = Annotated[Principal, Depends(people)]


@router.post("/{jobid}/attach", summary="A key to attach to a running interactive job's terminal (owner or admin): "
             "the head host's task-server address and a key good for one attach", responses=documented(404, 409))
async def attach(jobid: JobId, request: Request, p: Caller):
    return json_response(grant(ctl_of(request), p, jobid))


def grant(ctl: Controller, p: Principal, jobid: int) -> dict[str, Any]:
    """``{"jobid", "host", "address", "key"}``: where the job's terminal is, and a fresh key for it."""
    job = ctl.job(jobid)
    control.check_owner(p, job, "attach to")
    options = json.loads(job["options"]) if job.get("options") else {}
    if not options.get("interactive"):
        raise Conflict(f"job {jobid} is not interactive (submitted without -I): it has no terminal to attach to")
    just_ended = job["state"] in (DONE, EXIT) and job.get("end_code") != NOT_STARTED and job.get("start_time") \
        and job.get("head_host") and time.time_ns() - int(job["start_time"]) < ENDED_TERMINAL_S * 10**9
    if job["state"] not in (RUN, USUSP, SSUSP) and not just_ended:
        waiting = job["state"] == PEND or job["state"].startswith("P")
        raise Conflict(f"job {jobid} is {job['state']}: " + ("its terminal exists once it starts" if waiting
                                                               else "it has no terminal any more"))
    host = job["head_host"]
    h = ctl.hosts.get(host)
    if h is None or not h.task_address:
        raise Conflict(f"the worker of host {host}, where job {jobid} runs, offers no task server: its terminal "
                       f"cannot be reached")
    key = secrets.token_hex(16)
    with ctl.tx():
        ctl.queue(host, AttachKey(jobid=jobid, key=key, run=job["start_time"]))
    return {"jobid": jobid, "host": host, "address": h.task_address, "key": key}
