"""Prometheus metrics of one controller (``GET /metrics``).

Gauges that describe state (jobs by state and queue, workers by status, event-log lag) are read
from the controller's in-memory tallies at scrape time by a collector, so they cost nothing on the
request path and can never drift from what the API reports. Counters and the latency histogram
are updated as things happen. Each controller gets its own registry (no process-global state).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

if TYPE_CHECKING:
    from xce.controller.service import Controller


class _StateCollector:
    def __init__(self, ctl: "Controller") -> None:
        self.ctl = ctl

    def collect(self):
        ctl = self.ctl
        yield GaugeMetricFamily("xce_controller_leader", "1 while this controller leads, 0 while it follows",
                                value=1 if ctl.leader else 0)
        if not ctl.leader:
            return  # a follower's tallies are not the cluster's: scrape the leader for them
        if ctl.sched_seen_mono is not None:
            yield GaugeMetricFamily("xce_scheduler_last_request_seconds",
                                    "Seconds since the scheduler last read the event log",
                                    value=time.monotonic() - ctl.sched_seen_mono)
        jobs = GaugeMetricFamily("xce_jobs", "Jobs by state and queue", labels=["state", "queue"])
        for (queue, state), n in sorted(ctl.counts.items()):
            jobs.add_metric([state, queue], n)
        yield jobs
        workers = GaugeMetricFamily("xce_workers", "Registered workers by status", labels=["status"])
        by_status: dict[str, int] = {"ok": 0, "unavail": 0}
        for h in ctl.hosts.values():
            by_status[h.status] = by_status.get(h.status, 0) + 1
        for status, n in sorted(by_status.items()):
            workers.add_metric([status], n)
        yield workers
        yield GaugeMetricFamily("xce_event_log_last_seq", "Newest event seq", value=ctl.last_seq)
        yield GaugeMetricFamily("xce_event_log_lag",
                                "Events the scheduler has not fetched yet (last seq - seq it last read after)",
                                value=max(0, ctl.last_seq - ctl.sched_cursor))


class Metrics:
    def __init__(self, ctl: "Controller") -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.submitted = Counter("xce_jobs_submitted", "Jobs accepted by submit", ["queue"], registry=r)
        self.submit_commits = Counter("xce_submit_commits", "Transactions that committed submissions "
                                      "(a group commit holds several: submitted / commits = group size)", registry=r)
        self.transitions = Counter("xce_job_transitions", "Job state transitions by cause", ["move"], registry=r)
        self.decisions = Counter("xce_decisions", "Scheduler decisions by op and outcome", ["op", "outcome"], registry=r)
        self.latency = Histogram(
            "xce_api_request_seconds", "API latency by route", ["method", "route", "status"], registry=r,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        r.register(_StateCollector(ctl))


class LatencyMiddleware:
    """Pure ASGI middleware (no per-request task) that times every request by its route template."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = [500]

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            self.metrics.latency.labels(scope["method"], path, str(status[0])).observe(time.perf_counter() - start)
