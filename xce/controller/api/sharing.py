"""What is shared and who has had it: the cluster's shared pools (``GET /v1/pools``) and a fair-share
queue's standing (``GET /v1/queues/{name}/shares``).

Both are read-only views computed in the controller from its job records (the scheduler keeps its
own tallies in another process); :mod:`xce.controller.records.pools` and :mod:`xce.controller.records.fairshare`
say how each matches what the scheduler charges.
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request

from xce.controller.api.responses import COMMON, ctl_of, documented, json_response
from xce.controller.auth.security import people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, NotFound
from xce.controller.records import fairshare, pools
from xce.controller.web.models import MAX_NAME_LEN

router = APIRouter(prefix="/v1", tags=["cluster"], responses=COMMON)
Caller = Annotated[Principal, Depends(people)]


@router.get("/pools", summary="Shared pools (licenses): total, in use by which jobs and users, pending demand")
async def shared_pools(request: Request, p: Caller):
    return json_response(pools.pools_view(ctl_of(request)))


@router.get("/queues/{name}/shares", summary="A fairshare queue's owners: shares, decayed usage, factor, rank",
            responses=documented(404, 409))
async def queue_shares(request: Request, p: Caller,
                       name: Annotated[str, Path(min_length=1, max_length=MAX_NAME_LEN)]):
    ctl = ctl_of(request)
    if name not in ctl.config.queues:
        raise NotFound(f"queue {name} does not exist")
    picker = fairshare.picker_of(ctl, name)
    if picker != "fairshare":
        raise Conflict(f"queue {name} is not scheduled by fair share (its picker is {picker}); "
                       "set job_pick_plugin = \"fairshare\" on it")
    return json_response(fairshare.shares_view(ctl, name, time.time_ns()))
