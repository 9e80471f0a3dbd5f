"""The FastAPI application around one opened :class:`~xce.controller.service.Controller`: the REST
API under ``/v1``, the dashboard under ``/ui/`` (``/`` leads there), ``/metrics``, and the API
documentation at ``/docs`` and ``/redoc`` (served offline, :mod:`xce.controller.web.apidocs`).

Besides the routers it runs background loops on the same event loop (so they share the
single-writer discipline): the leadership lease (renewed by the leader, watched by followers),
and, on the leader only, worker liveness every second or so, the scheduler's liveness, and
housekeeping (pruning the event log and old decision ids) every few seconds.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import time
from contextlib import asynccontextmanager
from importlib.resources import files

from fastapi import Depends, FastAPI
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import SQLAlchemyError

from xce.controller.api import (
    acct as acct_api,
    admin,
    attach,
    cluster,
    drift,
    errors,
    jobs,
    sched,
    sharing,
    status,
    unavailable,
    workers,
    workload,
)
from xce.controller.api.fastlane import FastLane
from xce.controller.api.responses import COMMON
from xce.controller.auth.security import scraper
from xce.controller.ha import leadership
from xce.controller.ha.gate import LeaderGate
from xce.controller.hosts import fleet
from xce.controller.jobs import gates
from xce.controller.jobs.groupcommit import GroupCommitter
from xce.controller.records import acct
from xce.controller.records.metrics import LatencyMiddleware, Metrics
from xce.controller.sched import feed
from xce.controller.service import Controller
from xce.controller.ui import routes as ui_routes
from xce.controller.ui.session import NotLoggedIn
from xce.controller.web import apidocs, hygiene

log = logging.getLogger("xce.controller")

#: Largest request body accepted (an array submission with a big environment fits easily).
MAX_BODY = 8 * 1024 * 1024
PRUNE_EVERY_S = 5.0
#: How often, at most, finished jobs past ``[accounting] retention_days`` are deleted.
ACCT_PRUNE_EVERY_S = 60.0
#: How often pending jobs held back by the controller are looked at again (begin times, array limits,
#: dependencies): the delay between a job becoming eligible and the scheduler hearing of it.
GATES_EVERY_S = 0.25


class BodyLimit:
    """Refuse oversized bodies by Content-Length before anything reads them (413)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            for k, v in scope["headers"]:
                if k == b"content-length" and v.isdigit() and int(v) > MAX_BODY:
                    await Response(f'{{"detail":"request body larger than {MAX_BODY} bytes"}}', 413,
                                   media_type="application/json")(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _version() -> str:
    try:
        return importlib.metadata.version("xce")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


async def _every(seconds: float, what, name: str, ctl: Controller | None = None) -> None:
    """Run ``what`` every ``seconds``; with ``ctl``, only while that controller leads."""
    said = 0.0
    while True:
        await asyncio.sleep(seconds)
        if ctl is not None and not ctl.leader:
            continue
        try:
            what()
        except leadership.NotLeader:
            pass  # it stepped down meanwhile; the loop idles until it leads again
        except SQLAlchemyError as exc:  # the database away: the next round tries again; one line a while
            if time.monotonic() - said >= unavailable.SAY_EVERY_S:
                said = time.monotonic()
                log.warning("%s failed: the database did not answer (%s); retrying", name, unavailable.first_line(exc))
        except Exception:  # a failing housekeeping round must not stop the next one
            log.exception("%s failed", name)


def _no_otel() -> dict:
    """FastAPI's own OpenTelemetry hooks off (where this FastAPI has them): XCE exports Prometheus
    metrics, and the hooks look for an OTel provider on every request, ~5% of a request's CPU."""
    import inspect

    if "telemetry" in inspect.signature(FastAPI.__init__).parameters:
        return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    return {}


def create_app(ctl: Controller) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        period = max(0.05, min(1.0, ctl.settings.worker_timeout / 4))
        # a tenth of the retention, so a job is gone at most 10% after it is due; at most once a minute
        retention_s = ctl.config.accounting.retention_days * 86400
        acct_prune_s = max(1.0, min(ACCT_PRUNE_EVERY_S, retention_s / 10)) if retention_s else ACCT_PRUNE_EVERY_S
        watch = leadership.Watch(ctl)
        tasks = [asyncio.create_task(_every(ctl.settings.lease_s / 4, watch.tick, "leadership")),
                 asyncio.create_task(_every(period, lambda: fleet.check_liveness(ctl), "liveness check", ctl)),
                 asyncio.create_task(_every(1.0, lambda: feed.check_scheduler(ctl), "scheduler check", ctl)),
                 asyncio.create_task(_every(PRUNE_EVERY_S, lambda: feed.prune(ctl), "pruning", ctl)),
                 asyncio.create_task(_every(acct_prune_s, lambda: acct.prune_finished(ctl),
                                            "accounting retention", ctl)),
                 asyncio.create_task(_every(GATES_EVERY_S, lambda: gates.tick(ctl), "admitting gated jobs", ctl))]
        try:
            yield
        finally:
            for t in tasks:
                t.cancel()

    app = apidocs.make_app(title="XCE controller", version=_version(), lifespan=lifespan,
                           description="Authoritative state of an XCE cluster. See docs/api.md.", **_no_otel())
    app.state.ctl = ctl
    app.state.submissions = GroupCommitter(ctl)
    metrics = Metrics(ctl)
    ctl.attach_metrics(metrics)
    errors.install(app)
    hygiene.install(app)
    unavailable.install(app)  # after hygiene: a database failure is 503, a value too wide still 422
    # Routes are matched in this order, each request against every route before its own, and no two
    # routers share a path: the ones every job calls come first.
    for r in (workers.router, sched.router, jobs.router, cluster.router, acct_api.router, admin.router, drift.router,
              status.router, workload.router, attach.router, sharing.router, ui_routes.router):
        app.include_router(r)
    app.mount("/ui/static", StaticFiles(directory=str(files("xce.controller.ui") / "static")), name="ui-static")

    @app.exception_handler(NotLoggedIn)
    async def _log_in_first(request, exc):
        return ui_routes.not_logged_in(request)

    @app.get("/", include_in_schema=False)
    async def root():
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui", include_in_schema=False)
    async def ui_root():
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/metrics", tags=["metrics"], dependencies=[Depends(scraper)], responses=COMMON,
             summary="Prometheus metrics (no token needed when [metrics] public = true)")
    async def prometheus_metrics():
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    app.add_middleware(FastLane, api=app)  # innermost: the middleware below applies to its requests too
    app.add_middleware(LatencyMiddleware, metrics=metrics)
    app.add_middleware(hygiene.RequestHygiene)
    app.add_middleware(LeaderGate, ctl=ctl)
    app.add_middleware(apidocs.DocsPolicy)
    app.add_middleware(BodyLimit)
    return app
