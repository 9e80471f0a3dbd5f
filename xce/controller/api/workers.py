"""The workers' endpoints: register, load report (heartbeat), action long-poll, job reports.

``POST /v1/workers/NAME/reports`` is what workers send: every job report made since the last
request (``started`` and ``finished`` of a short job together), applied in one transaction.
``.../jobs/ID/status`` takes one report, for tools and older workers.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from xce.controller import fleet
from xce.controller.api.fastlane import hot
from xce.controller.api.responses import COMMON, Cursor, JobId, MAX_WAIT_S, ctl_of, documented, json_response, long_poll
from xce.controller.models import JobReportBatch, JobStatusReport, LoadReport, RegisterRequest
from xce.controller.security import worker_role
from xce.controller.service import Signal
from xce.controller.tokens import Principal

router = APIRouter(prefix="/v1/workers", tags=["workers"], responses=COMMON)
Worker = Annotated[Principal, Depends(worker_role)]


@router.post("/register", summary="Register a host (or re-register after a restart, with `running`)",
             responses=documented(413))
async def register(body: RegisterRequest, request: Request, p: Worker):
    fleet.check_worker(p, body.name)
    return json_response(fleet.register(ctl_of(request), body))


@hot
@router.post("/{name}/load", summary="Load indices (and optional usage ticks); also the heartbeat",
             responses=documented(404, 413))
async def load(name: str, body: LoadReport, request: Request, p: Worker):
    fleet.check_worker(p, name)
    return json_response(fleet.report_load(ctl_of(request), name, body))


@hot
@router.get("/{name}/actions", summary="Actions with id > after; acknowledges those <= after (long-poll)",
            responses=documented(404))
async def actions(name: str, request: Request, p: Worker, after: Cursor = 0,
                  wait: float = Query(0.0, ge=0, le=MAX_WAIT_S), limit: int = Query(100, ge=1, le=1000)):
    fleet.check_worker(p, name)
    ctl = ctl_of(request)
    signal = ctl.action_signals.setdefault(name, Signal())
    out = await long_poll(signal, wait, lambda: fleet.fetch_actions(ctl, name, after, limit),
                          lambda r: not r["actions"])
    return json_response(out)


@router.post("/{name}/jobs/{jobid}/status", summary="started / usage / running / finished / rejected / start_failed",
             responses=documented(404, 409, 413))
async def job_status(name: str, jobid: JobId, body: JobStatusReport, request: Request, p: Worker):
    fleet.check_worker(p, name)
    return json_response(fleet.job_status(ctl_of(request), name, jobid, body))


@hot
@router.post("/{name}/reports", summary="Job reports (started / usage / finished ...) in order, in one transaction",
             responses=documented(404, 413))
async def job_reports(name: str, body: JobReportBatch, request: Request, p: Worker):
    fleet.check_worker(p, name)
    return json_response(fleet.job_reports(ctl_of(request), name, body.reports))
