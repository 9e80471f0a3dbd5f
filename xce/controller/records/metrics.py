"""Prometheus metrics of one controller (``GET /metrics``).

Gauges that describe state (jobs by state and queue, pending jobs by reason, slots per host, worker
report age, event-feed lag, whether the scheduler reads the feed) are read at scrape time by a collector,
from the controller's in-memory tallies or one indexed query each, so they cost nothing on the
request path and can never drift from what the API and the dashboard show. Counters and histograms
are updated as things happen: API latency, database commit latency, submit-to-start latency at
each dispatch, and the scheduler's round duration and decisions per round, which the scheduler
process sends with the decisions it posts (:mod:`xce.controller.sched.schedwatch`). Each controller gets
its own registry (no process-global state).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from xce.controller.sched import feed
from xce.controller.web import views

if TYPE_CHECKING:
    from xce.controller.sched.schedwatch import Round
    from xce.controller.service import Controller

#: Bucket bounds, chosen for what each figure is expected to be on a healthy cluster and what an
#: operator would alert on (a round over a second, a job waiting hours, a commit over 100 ms).
ROUND_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
ROUND_DECISIONS = (0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 50_000, 100_000)
WAIT_SECONDS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200,
                86_400, 259_200, 604_800)
COMMIT_SECONDS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
API_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class _StateCollector:
    def __init__(self, ctl: "Controller") -> None:
        self.ctl = ctl

    def collect(self):
        ctl = self.ctl
        yield GaugeMetricFamily("xce_controller_leader", "1 while this controller leads, 0 while it follows",
                                value=1 if ctl.leader else 0)
        if not ctl.leader:
            return  # a follower's tallies are not the cluster's: scrape the leader for them
        if ctl.sched_watch.seen_mono is not None:
            yield GaugeMetricFamily("xce_scheduler_last_request_seconds",
                                    "Seconds since the scheduler last read the event log",
                                    value=time.monotonic() - ctl.sched_watch.seen_mono)
        jobs = GaugeMetricFamily("xce_jobs", "Jobs by state and queue", labels=["state", "queue"])
        for (queue, state), n in sorted(ctl.counts.items()):
            jobs.add_metric([state, queue], n)
        yield jobs
        pending = GaugeMetricFamily(
            "xce_jobs_pending_by_reason",
            "Pending jobs by the category (step) of their first pend reason; 'unscheduled' = no round has "
            "considered them yet", labels=["category"])
        for category, n in views.pending_by_category(ctl).items():
            pending.add_metric([category], n)
        yield pending
        workers = GaugeMetricFamily("xce_workers", "Registered workers by status", labels=["status"])
        by_status: dict[str, int] = {"ok": 0, "unreach": 0, "down": 0, "closed": 0}
        for h in ctl.hosts.values():
            by_status[h.scheduling_status] = by_status.get(h.scheduling_status, 0) + 1
        for status, n in sorted(by_status.items()):
            workers.add_metric([status], n)
        yield workers
        used = views.slot_use(ctl)
        total = GaugeMetricFamily("xce_host_slots", "Slots a host offers (configuration override, else measured)",
                                  labels=["host"])
        held = GaugeMetricFamily("xce_host_slots_used", "Slots held on a host by running and suspended jobs",
                                 labels=["host"])
        age = GaugeMetricFamily("xce_worker_report_age_seconds", "Seconds since a host's worker last reported",
                                labels=["host"])
        now = time.monotonic()
        for name in sorted(ctl.hosts):
            h = ctl.hosts[name]
            total.add_metric([name], _number(ctl.host_values(h).get("slots")))
            held.add_metric([name], used.get(name, (0, 0))[0])
            age.add_metric([name], max(0.0, now - h.seen_mono))
        yield total
        yield held
        yield age
        behind, behind_s = feed.lag(ctl)
        yield GaugeMetricFamily("xce_event_log_last_seq", "Newest event seq", value=ctl.last_seq)
        yield GaugeMetricFamily("xce_event_log_lag",
                                "Events the scheduler has not fetched yet (last seq - seq it last read after)",
                                value=behind)
        yield GaugeMetricFamily("xce_event_feed_lag_seconds",
                                "Age of the oldest event the scheduler has not fetched yet (0 when up to date)",
                                value=behind_s)
        yield GaugeMetricFamily("xce_scheduler_up", "1 while the scheduler reads the event feed (within half the "
                                "worker timeout, at least 5 s)", value=1 if feed.scheduler_alive(ctl) else 0)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


class Metrics:
    def __init__(self, ctl: "Controller") -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.submitted = Counter("xce_jobs_submitted", "Jobs accepted by submit", ["queue"], registry=r)
        self.submit_commits = Counter("xce_submit_commits", "Transactions that committed submissions "
                                      "(a group commit holds several: submitted / commits = group size)", registry=r)
        self.transitions = Counter("xce_job_transitions", "Job state transitions by cause", ["move"], registry=r)
        self.decisions = Counter("xce_decisions", "Scheduler decisions by op and outcome", ["op", "outcome"], registry=r)
        self.latency = Histogram("xce_api_request_seconds", "API latency by route", ["method", "route", "status"],
                                 registry=r, buckets=API_SECONDS)
        self.commit_seconds = Histogram("xce_db_commit_seconds", "Time to commit a transaction that changed rows",
                                        registry=r, buckets=COMMIT_SECONDS)
        self.wait_seconds = Histogram("xce_job_wait_seconds", "Submit-to-start latency, observed at each dispatch",
                                      ["queue"], registry=r, buckets=WAIT_SECONDS)
        self.round_seconds = Histogram("xce_sched_round_seconds", "Scheduling round duration (sent by the scheduler)",
                                       registry=r, buckets=ROUND_SECONDS)
        self.round_decisions = Histogram("xce_sched_round_decisions", "Decisions per scheduling round",
                                         registry=r, buckets=ROUND_DECISIONS)
        r.register(_StateCollector(ctl))

    def moved(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        """A job went through ``verb`` (called by ``Controller.move`` with the updated row)."""
        self.transitions.labels(verb).inc()
        if verb == "dispatch" and job.get("start_time") and job.get("submit_time"):
            self.wait_seconds.labels(job["queue"]).observe(max(0.0, (job["start_time"] - job["submit_time"]) / 1e9))

    def rounds(self, rounds: "list[Round]") -> None:
        for rnd in rounds:
            self.round_seconds.observe(rnd.duration_s)
            self.round_decisions.observe(rnd.decisions)


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
