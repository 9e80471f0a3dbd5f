"""``GET /v1/acct``: finished jobs of a window with their wait, run and CPU time, memory peak and exit
status, and the totals (LSF's ``bacct``, Slurm's ``sacct``). See :mod:`xce.controller.records.acct`."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from xce.controller.api.responses import COMMON, MAX_ID, ctl_of, json_response
from xce.controller.auth.security import people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import FieldErrors
from xce.controller.records import acct

router = APIRouter(prefix="/v1", tags=["accounting"], responses=COMMON)


@router.get("/acct", summary="Finished jobs that ended in a window, with wait, run and CPU time, memory peak, exit "
            "status and totals; others' commands are null unless [privacy] show_all_jobs")
async def accounting(
    request: Request,
    p: Annotated[Principal, Depends(people)],
    since: int = Query(0, ge=0, le=MAX_ID, description="Jobs that ended at or after this time (ns since the epoch)"),
    until: int | None = Query(None, ge=0, le=MAX_ID, description="... and before this time (default: now)"),
    user: str | None = Query(None, max_length=128, description="A user name, or 'all'; default: the caller's own jobs"),
    queue: str | None = Query(None, max_length=128, description="Only this queue"),
    project: str | None = Query(None, max_length=128, description="Only this project"),
):
    until_ns = time.time_ns() if until is None else until
    if until_ns <= since:
        raise FieldErrors.one(["query", "until"], f"the window ends ({until_ns}) before it starts ({since})",
                              "value_error.window")
    who = None if user == "all" else (user or p.name)
    ctl = ctl_of(request)
    # The query reads on a connection of its own: off the event loop, so a long window holds nobody up.
    res = await asyncio.to_thread(acct.report, ctl, p, since_ns=since, until_ns=until_ns, user=who, queue=queue,
                                  project=project)
    return json_response(res)
