"""The workers' endpoints: register, load report (heartbeat), action long-poll, job reports.

``POST /v1/workers/NAME/reports`` is what workers send: every job report made since the last
request (``started`` and ``finished`` of a short job together), applied in one transaction.
``.../jobs/ID/status`` takes one report, for tools and older workers.

A process that serves many host identities (``xce emulate-hosts``) registers, polls and beats for
all of them with one request each (``register-many``, ``poll``, ``heartbeat``): the same checks, a
worker token speaks only for the hosts it may act for (every name is checked).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import Field

from xce.controller.api.fastlane import hot
from xce.controller.api.responses import (
    COMMON,
    MAX_ID,
    MAX_WAIT_S,
    Cursor,
    JobId,
    ctl_of,
    documented,
    json_response,
    long_poll,
)
from xce.controller.auth.security import worker_role
from xce.controller.auth.tokens import Principal
from xce.controller.hosts import fleet
from xce.controller.web.models import (
    JobReport,
    JobReportBatch,
    JobStatusReport,
    LoadReport,
    Name,
    RegisterRequest,
    _Body,
)

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
    signal = ctl.action_signals.of(name)
    out = await long_poll(signal, wait, lambda: fleet.fetch_actions(ctl, name, after, limit),
                          lambda r: not r["actions"])
    return json_response(out)


#: Most hosts one many-host request may name.
MAX_HOSTS = 20_000


class RegisterMany(_Body):
    hosts: list[RegisterRequest] = Field(..., min_length=1, max_length=MAX_HOSTS)


class PollMany(_Body):
    hosts: list[Name] = Field(..., min_length=1, max_length=MAX_HOSTS)
    after: int = Field(0, ge=0, le=MAX_ID, description="Every action of these hosts up to this id is carried out.")
    wait: float = Field(0.0, ge=0, le=MAX_WAIT_S)
    limit: int = Field(1000, ge=1, le=10_000)


class HeartbeatMany(_Body):
    alive: list[Name] = Field(default_factory=list, max_length=MAX_HOSTS,
                              description="Hosts with nothing new to report: the heartbeat alone.")
    hosts: dict[Name, LoadReport] = Field(default_factory=dict, max_length=MAX_HOSTS,
                                          description="Load reports of hosts that have one.")


class ReportsMany(_Body):
    hosts: dict[Name, list[JobReport]] = Field(..., min_length=1, max_length=MAX_HOSTS)


def _check_all(p: Principal, names) -> None:
    if p.is_admin or (p.role == "worker" and p.name == "*"):
        return
    for name in names:
        fleet.check_worker(p, name)


@router.post("/register-many", summary="Register several hosts in one transaction (emulated hosts)",
             responses=documented(413))
async def register_many(body: RegisterMany, request: Request, p: Worker):
    _check_all(p, [h.name for h in body.hosts])
    return json_response(fleet.register_many(ctl_of(request), body.hosts))


@hot
@router.post("/poll", summary="Actions of several hosts with id > after; acknowledges those <= after (long-poll)",
             responses=documented(413))
async def poll_many(body: PollMany, request: Request, p: Worker):
    _check_all(p, body.hosts)
    ctl = ctl_of(request)
    out = await long_poll(ctl.action_signals.of_group(body.hosts), body.wait,
                          lambda: fleet.fetch_actions_many(ctl, body.hosts, body.after, body.limit),
                          lambda r: not r["actions"] and not r["unknown"])
    return json_response(out)


@hot
@router.post("/heartbeat", summary="Load reports (the heartbeat) of several hosts in one request",
             responses=documented(413))
async def heartbeat_many(body: HeartbeatMany, request: Request, p: Worker):
    _check_all(p, body.alive)
    _check_all(p, body.hosts)
    return json_response(fleet.heartbeat_many(ctl_of(request), body.alive, body.hosts))


@hot
@router.post("/reports", summary="Job reports of several hosts, each host's in order, in one transaction",
             responses=documented(413))
async def reports_many(body: ReportsMany, request: Request, p: Worker):
    _check_all(p, body.hosts)
    return json_response(fleet.reports_many(ctl_of(request), body.hosts))


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
