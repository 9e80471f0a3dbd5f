"""Administration: issue and revoke tokens, reload the configuration, control scheduler recording."""

from __future__ import annotations

import os
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request

from xce.controller.api.responses import COMMON, ctl_of, documented, json_response
from xce.controller.auth import tokens
from xce.controller.auth.security import admin_only
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, FieldErrors, NotFound
from xce.controller.hosts import fleet
from xce.controller.jobs import queues
from xce.controller.sched import feed
from xce.controller.web.models import (
    HostCloseRequest,
    HostDownRequest,
    QueueCloseRequest,
    RecordRequest,
    TokenRequest,
    UserRequest,
)
from xce.replay.format import default_name

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=COMMON)
Admin = Annotated[Principal, Depends(admin_only)]


def _issue(request: Request, p: Principal, role: str, name: str, expires_in_s: int | None, note: str) -> dict:
    ctl = ctl_of(request)
    owner = ctl.settings.single_user
    if owner is not None and role in ("user", "admin") and name not in (owner, "admin"):
        raise Conflict(f"cannot issue a token for {name}: this is a personal cluster, where every job runs as "
                       f"{owner}, so {name}'s jobs would run as {owner}; start the cluster with "
                       f"`xce up --multi-user` (as root) to give each user their own identity")
    try:
        tokens.check_name(role, name)
    except ValueError as exc:
        raise FieldErrors.one(["body", "name"], str(exc)) from None
    expires = time.time_ns() + expires_in_s * 1_000_000_000 if expires_in_s else None
    with ctl.tx() as conn:
        row, text = ctl.tokens.create(conn, role, name, expires=expires, note=note or f"issued by {p.name}")
    return dict(row.view(), token=text)


@router.post("/users", summary="Issue a token for a user (role admin with `admin: true`); see also /tokens",
             responses=documented(409, 413))
async def add_user(body: UserRequest, request: Request, p: Admin):
    return json_response(_issue(request, p, "admin" if body.admin else "user", body.name, None, ""))


@router.post("/tokens", status_code=201, summary="Issue a token; its text is returned once and stored only hashed",
             responses=documented(409, 413))
async def create_token(body: TokenRequest, request: Request, p: Admin):
    return json_response(_issue(request, p, body.role, body.name, body.expires_in_s, body.note), 201)


@router.get("/tokens", summary="Issued tokens (never their text): active ones, or all with `all=true`")
async def list_tokens(request: Request, p: Admin,
                      include_inactive: bool = Query(False, alias="all", description="Include revoked and expired")):
    return json_response({"tokens": ctl_of(request).tokens.listing(include_inactive=include_inactive)})


@router.post("/tokens/{token_id}/revoke", summary="Revoke a token: every later request with it is 401",
             responses=documented(404))
async def revoke_token(request: Request, p: Admin,
                       token_id: str = Path(..., min_length=1, max_length=64, description="The token's id")):
    ctl = ctl_of(request)
    with ctl.tx() as conn:
        row = ctl.tokens.revoke(conn, token_id, p.name)
    if row is None:
        raise NotFound(f"no token with id {token_id!r} (see xceadmin token list --all)")
    return json_response(row.view())


HostName = Path(..., min_length=1, max_length=255, description="The host's name")


@router.post("/hosts/{name}/down", summary="Declare a host down: its jobs end EXIT (host lost) or, with requeue, "
             "rerunnable ones go back to PEND", responses=documented(404))
async def host_down(body: HostDownRequest, request: Request, p: Admin, name: str = HostName):
    return json_response(fleet.declare_down(ctl_of(request), name, body.requeue, p.name))


@router.post("/hosts/{name}/remove", summary="Remove a decommissioned host from the cluster (refused while "
             "it holds jobs or its worker reports)", responses=documented(404, 409))
async def host_remove(request: Request, p: Admin, name: str = HostName):
    return json_response(fleet.remove_host(ctl_of(request), name, p.name))


@router.post("/hosts/{name}/close", summary="Close a host: it finishes its jobs and gets no new ones",
             responses=documented(404))
async def host_close(body: HostCloseRequest, request: Request, p: Admin, name: str = HostName):
    return json_response(fleet.set_closed(ctl_of(request), name, body.reason or f"closed by {p.name}"))


@router.post("/hosts/{name}/open", summary="Open a closed host to new jobs again", responses=documented(404))
async def host_open(request: Request, p: Admin, name: str = HostName):
    return json_response(fleet.set_closed(ctl_of(request), name, None))


QueueName = Path(..., min_length=1, max_length=255, description="The queue's name")


@router.post("/queues/{name}/close", summary="Close a queue: it takes no new jobs and dispatches nothing; it "
             "stays closed over a restart until opened", responses=documented(404))
async def queue_close(body: QueueCloseRequest, request: Request, p: Admin, name: str = QueueName):
    return json_response(queues.set_closed(ctl_of(request), name, body.reason or f"closed by {p.name}", p.name))


@router.post("/queues/{name}/open", summary="Open a queue an administrator closed", responses=documented(404, 409))
async def queue_open(request: Request, p: Admin, name: str = QueueName):
    return json_response(queues.set_closed(ctl_of(request), name, None, p.name))


@router.post("/reconfig", summary="Reload the controller's TOML file; an invalid file changes nothing",
             responses=documented(409))
async def reconfig(request: Request, p: Admin):
    return json_response(ctl_of(request).reconfig(p.name))


@router.post("/scheduler/record", status_code=201, summary="Ask the scheduler to start or stop recording (a control command)",
             responses=documented(413))
async def record(body: RecordRequest, request: Request, p: Admin):
    if body.action == "start":
        command = {"op": "record_start", "file": record_path(ctl_of(request), body.file),
                   "snapshot_interval": body.snapshot_interval}
    else:
        command = {"op": "record_stop"}
    command["by"] = p.name
    return json_response(feed.add_control(ctl_of(request), command), 201)


def record_path(ctl, file: str | None) -> str:
    """Where a recording goes: inside the record directory, whatever the request says.

    The scheduler writes it with its own rights (root on many sites), so an admin token must not be
    able to name ``/etc/passwd``; a relative name is taken inside the directory."""
    base = os.path.abspath(ctl.config.scheduler.record_dir or os.path.join(ctl.state_dir, "recordings"))
    name = file or default_name()
    path = os.path.normpath(os.path.join(base, name))
    if "\0" in name or os.path.commonpath([base, path]) != base or path == base:
        raise FieldErrors.one(["body", "file"], f"recordings are written inside {base} (the state directory's "
                              f"recordings/, or [scheduler] record_dir); {name!r} is outside it")
    return path
