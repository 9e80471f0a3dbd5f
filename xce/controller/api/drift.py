"""The drift report: per job type and resource, what was declared against what was measured.

Read-only and open to every authenticated role: a person fixes the declaration, and a scheduler
or tool may want to show the same figures. Nothing here changes a declaration (job-resources.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from xce.accounting.drift import Thresholds
from xce.controller.api.responses import COMMON, ctl_of, json_response
from xce.controller.auth.security import any_role
from xce.controller.auth.tokens import Principal
from xce.controller.errors import FieldErrors
from xce.controller.records import accounting

router = APIRouter(prefix="/v1", tags=["accounting"], responses=COMMON)


@router.get("/drift", summary="Declared against measured, per job type and resource, over finished jobs")
async def drift(
    request: Request,
    p: Annotated[Principal, Depends(any_role)],
    job_type: str | None = Query(None, alias="jobType", description="Only this job type"),
    min_samples: int = Query(20, alias="minSamples", ge=1, description="Fewest runs before a verdict"),
    low: float = Query(0.5, gt=0, description="measured/declared below this is 'far below'"),
    high: float = Query(1.5, gt=0, description="measured/declared above this is 'far above'"),
):
    if low >= high:
        raise FieldErrors.one(["query", "low"], f"low ({low}) must be less than high ({high})", "value_error")
    ctl = ctl_of(request)
    with ctl.tx() as conn:
        rep = accounting.report(conn, job_type, min_samples, Thresholds(low=low, high=high))
    out = rep.to_json()
    out["query"] = {"jobType": job_type, "minSamples": min_samples, "low": low, "high": high}
    return json_response(out)
