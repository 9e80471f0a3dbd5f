"""Administration: issue user tokens, reload the configuration, control scheduler recording."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from xce.controller import feed, tokens
from xce.controller.api.responses import ctl_of, json_response
from xce.controller.errors import FieldErrors
from xce.controller.models import RecordRequest, UserRequest
from xce.controller.security import admin_only
from xce.controller.tokens import Principal

router = APIRouter(prefix="/v1/admin", tags=["admin"])
Admin = Annotated[Principal, Depends(admin_only)]


@router.post("/users", summary="Issue a token for a user (role admin with `admin: true`)")
async def add_user(body: UserRequest, request: Request, p: Admin):
    try:
        token = tokens.make_token(ctl_of(request).secret, "admin" if body.admin else "user", body.name)
    except ValueError as exc:
        raise FieldErrors.one(["body", "name"], str(exc)) from None
    return json_response({"name": body.name, "role": "admin" if body.admin else "user", "token": token})


@router.post("/reconfig", summary="Reload the controller's TOML file; an invalid file changes nothing")
async def reconfig(request: Request, p: Admin):
    return json_response(ctl_of(request).reconfig(p.name))


@router.post("/scheduler/record", summary="Ask the scheduler to start or stop recording (a control command)")
async def record(body: RecordRequest, request: Request, p: Admin):
    if body.action == "start":
        command = {"op": "record_start", "file": body.file, "snapshot_interval": body.snapshot_interval}
    else:
        command = {"op": "record_stop"}
    command["by"] = p.name
    return json_response(feed.add_control(ctl_of(request), command), 201)
