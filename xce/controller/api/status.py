"""``GET /v1/status``: answered by every controller, leader or follower (see :mod:`xce.controller.records.status`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from xce.controller.api.responses import COMMON, ctl_of, json_response
from xce.controller.auth.security import any_role
from xce.controller.auth.tokens import Principal
from xce.controller.records import status as status_view

router = APIRouter(prefix="/v1", tags=["cluster"], responses=COMMON)


@router.get("/status", summary="This controller's role, the leader, the database, the scheduler and workers")
async def status(request: Request, p: Annotated[Principal, Depends(any_role)]):
    return json_response(status_view.status(ctl_of(request), admin=p.is_admin))
