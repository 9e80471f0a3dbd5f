"""The cluster's history as a workload for the simulator: ``GET /v1/workload`` (finished jobs of a
window, as SWF or XCE JSON-lines) and ``GET /v1/cluster/export`` (hosts and queues as a cluster file).

Open to users and admins, under the privacy rule of :mod:`xce.controller.web.views`: a job's command is
exported only to its owner and admins (or to everyone with ``[privacy] show_all_jobs``); what a
simulation needs (sizes, times, requests, users, queues) is what ``xce jobs -u all`` shows anyone.
"""

from __future__ import annotations

import time
from typing import Annotated, Iterator, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse

from xce import __version__
from xce.controller.api.responses import COMMON, MAX_ID, ctl_of
from xce.controller.auth.security import people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import FieldErrors
from xce.controller.records import workload
from xce.controller.web import views
from xce.whatif import cluster_file, export

router = APIRouter(prefix="/v1", tags=["workload"], responses=COMMON)
Caller = Annotated[Principal, Depends(people)]


def _machine(ctl) -> tuple[int, int]:
    values = [ctl.host_values(h) for h in ctl.hosts.values()]
    return len(values), sum(int(v.get("slots", 0) or 0) for v in values)


@router.get("/workload", summary="Finished jobs submitted in a window, as SWF or XCE JSON-lines (streamed)",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/plain": {}, "application/x-ndjson": {}},
                             "description": "The workload, one job a line after a header"}})
async def export_workload(
    request: Request,
    p: Caller,
    since: int = Query(..., ge=0, le=MAX_ID, description="Jobs submitted at or after this time (ns since the epoch)"),
    until: int | None = Query(None, ge=0, le=MAX_ID, description="... and before this time (default: now)"),
    queue: str | None = Query(None, max_length=128, description="Only this queue"),
    user: str | None = Query(None, max_length=128, description="Only this user"),
    format: Literal["swf", "xce"] = Query("swf", description="swf, or xce (JSON-lines keeping request strings)"),
):
    ctl = ctl_of(request)
    until_ns = time.time_ns() if until is None else until
    if until_ns <= since:
        raise FieldErrors.one(["query", "until"], f"the window ends ({until_ns}) before it starts ({since})",
                              "value_error.window")
    hosts, slots = _machine(ctl)
    filters = {"queue": queue, "user": user}
    meta = dict(cluster=ctl.config.cluster_name, version=__version__, since_ns=since, until_ns=until_ns,
                hosts=hosts, slots=slots)
    engine = ctl.engine
    show_all = ctl.config.privacy.show_all_jobs
    pages = workload.finished_jobs(engine, since_ns=since, until_ns=until_ns, queue=queue, user=user)

    if format == "swf":
        def body() -> Iterator[bytes]:
            users, types = export.Numbering("User"), export.Numbering("JobType")
            queues = export.Numbering("Queue", sorted(ctl.config.queues))
            yield ("\n".join(export.swf_header(queues=queues, filters=filters, **meta)) + "\n").encode()
            base = since // export.NS
            for rows in pages:
                out: list[str] = []
                for row in rows:
                    export.swf_line(row, base, users, queues, types, out)
                yield ("\n".join(out) + "\n").encode()

        return StreamingResponse(body(), media_type="text/plain; charset=utf-8")

    def body_xce() -> Iterator[bytes]:
        yield (export.xce_header(filters=filters, **meta) + "\n").encode()
        for rows in pages:
            yield "".join(export.xce_line(r, views.sees_everything(p, r, show_all)) + "\n" for r in rows).encode()

    return StreamingResponse(body_xce(), media_type="application/x-ndjson")


@router.get("/cluster/export", summary="Hosts and queue configuration as the cluster file `xce sim run --cluster` "
            "reads", response_class=Response,
            responses={200: {"content": {"application/toml": {}}, "description": "The cluster file (TOML)"}})
async def export_cluster(request: Request, p: Caller):
    ctl = ctl_of(request)
    hosts = [(h.name, h.status, ctl.host_values(h)) for h in sorted(ctl.hosts.values(), key=lambda h: h.name)]
    return Response(cluster_file.render(ctl.config, hosts, version=__version__), media_type="application/toml")
