"""The fast lane answers exactly what FastAPI answers: the same requests, well-formed or not, sent to a
controller with it and to one without it (``XCE_FAST_LANE=0``) get the same status and body, and
the lane takes every route marked hot (so that one FastAPI no longer lets it plan is noticed here,
not in a benchmark)."""

from __future__ import annotations

import httpx
import pytest
from controller_harness import write_config

from xce.client.launch import start_controller
from xce.controller.api import fastlane
from xce.controller.service import Controller, Settings
from xce.controller.web.app import create_app

#: Fields that differ between two controllers for no fault of the lane (clocks, generated keys).
VOLATILE = {"ts", "submit_time", "created", "start_time", "end_time", "launch_key", "run", "head_seq", "last_seq",
            "control_seq", "seq", "registered", "last_seen", "queue_time", "t0"}


def _normal(obj):
    if isinstance(obj, dict):
        return {k: ("*" if k in VOLATILE else _normal(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_normal(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    ctls = []
    for lane in ("1", "0"):
        sd = tmp_path_factory.mktemp(f"lane{lane}")
        ctls.append(start_controller(sd, config=str(write_config(sd)), extra_args=("--worker-timeout", "600"),
                                     env={"XCE_FAST_LANE": lane}))
    yield ctls
    for c in ctls:
        c.stop()


def _answers(ctl) -> list[tuple[int, object]]:
    """The same conversation with ``ctl``: every hot route, and each way a request to one can be wrong."""
    out: list[tuple[int, object]] = []
    tokens = {role: ctl.token(role) for role in ("worker", "scheduler")} | {"admin": ctl.user_token("alice", admin=True)}
    with httpx.Client(base_url=ctl.url, timeout=30) as c:
        def call(method, path, role="admin", **kw):
            headers = kw.pop("headers", {})
            if role:
                headers.setdefault("Authorization", f"Bearer {tokens[role]}")
            r = c.request(method, path, headers=headers, **kw)
            try:
                body = r.json()
            except ValueError:
                body = r.text
            out.append((r.status_code, _normal(body), r.headers.get("www-authenticate")))
            return body

        call("POST", "/v1/workers/register", "worker", json={"name": "h1", "resources": {"slots": 4}})
        # submissions
        call("POST", "/v1/jobs", json={"command": ["true"], "array": 3})
        call("POST", "/v1/jobs", json={"command": ["true"], "tasks": 0})
        call("POST", "/v1/jobs", json={"command": ["true"], "queue": "nosuch"})
        call("POST", "/v1/jobs", content=b'{"command": ["true"]', headers={"Content-Type": "application/json"})
        call("POST", "/v1/jobs", content=b'{"command": ["true"]}', headers={"Content-Type": "text/plain"})
        call("POST", "/v1/jobs", content=b"", headers={"Content-Type": "application/json"})
        call("POST", "/v1/jobs", json={"command": ["true"]}, role=None)
        call("POST", "/v1/jobs", json={"command": ["true"]}, headers={"Authorization": "Bearer nope"})
        call("POST", "/v1/jobs", json={"command": ["true"]}, role="worker")
        call("POST", "/v1/jobs", json={"command": ["echo", "a\u0000b"]})
        for _ in range(2):
            call("POST", "/v1/jobs", json={"command": ["true"]}, headers={"Idempotency-Key": "same-key-1"})
        # the scheduler
        call("GET", "/v1/sched/events", "scheduler", params={"after": 0, "limit": 3})
        call("GET", "/v1/sched/events", "scheduler", params={"after": "x"})
        call("GET", "/v1/sched/events", "scheduler", params={"after": -1})
        call("GET", "/v1/sched/events", "scheduler", params={"after": 10**9})
        call("GET", "/v1/sched/events", "scheduler", params={"wait": 61})
        call("GET", "/v1/sched/events", "worker")
        dispatch = {"id": "d-1", "ts": 1, "decision": {"op": "DISPATCH", "jobid": 1, "placement": [["h1", 1]]}}
        call("POST", "/v1/sched/decisions", "scheduler", json={"decisions": [dispatch]}, params={"after": 0})
        call("POST", "/v1/sched/decisions", "scheduler", json={"decisions": [dispatch]})
        call("POST", "/v1/sched/decisions", "scheduler", json={"decisions": [{"id": "", "decision": {}}]})
        call("POST", "/v1/sched/decisions", "scheduler", json={"decisions": []}, params={"after": 10**9})
        call("POST", "/v1/sched/decisions", "scheduler", json={"decisions": []}, params={"limit": 0})
        # the worker
        acts = call("GET", "/v1/workers/h1/actions", "worker", params={"after": 0})
        call("GET", "/v1/workers/h1/actions", "worker", params={"after": "x"})
        call("GET", "/v1/workers/h1/actions", "worker", params={"wait": 100})
        call("GET", "/v1/workers/nosuch/actions", "worker")
        call("GET", "/v1/workers/h1/actions", "scheduler")
        last = acts["actions"][-1]["id"] if isinstance(acts, dict) and acts.get("actions") else 0
        call("POST", "/v1/workers/h1/reports", "worker", json={"reports": [
            {"jobid": 1, "status": "started", "pid": 7},
            {"jobid": 1, "status": "finished", "exit_code": 0, "usage": {"memory_rss": 10, "cpu_ms": 2000}},
            {"jobid": 2, "status": "finished", "exit_code": 0},
            {"jobid": 10**6, "status": "started"}]})
        call("POST", "/v1/workers/h1/reports", "worker", json={"reports": "none"})
        call("POST", "/v1/workers/h1/reports", "worker", json={"reports": [{"jobid": 1, "status": "exploded"}]})
        call("POST", "/v1/workers/nosuch/reports", "worker", json={"reports": []})
        call("GET", "/v1/workers/h1/actions", "worker", params={"after": last})
        call("POST", "/v1/workers/h1/load", "worker", json={"load": {"r1m": 0.5}})
        call("POST", "/v1/workers/h1/load", "worker", json={"load": {"r1m": "high"}})
        call("POST", "/v1/workers/h1/load", "worker", json={"load": {}, "usage": {"x": {}}})
        call("GET", "/v1/jobs/1", "admin")
        # the queues' counts, which scripts and dashboards poll
        call("GET", "/v1/queues", "admin")
        call("GET", "/v1/queues", "worker")
        call("GET", "/v1/queues", None)
        call("GET", "/v1/queues", headers={"Authorization": "Bearer nope"})
        call("GET", "/v1/queues", params={"unknown": "1"})
    return out


def test_the_lane_answers_every_request_as_fastapi_does(pair):
    fast, slow = (_answers(c) for c in pair)
    assert len(fast) == len(slow)
    for i, (a, b) in enumerate(zip(fast, slow)):
        assert a == b, f"request {i}: with the lane {a}, without {b}"
    statuses = {s for s, _, _ in fast}
    assert {200, 201, 401, 403, 404, 410, 422} <= statuses  # the conversation reached every kind of answer


def test_requests_the_lane_takes_are_timed_under_their_route(pair):
    fast = pair[0]
    r = httpx.get(f"{fast.url}/metrics", headers={"Authorization": f"Bearer {fast.token('admin')}"})
    assert 'route="/v1/sched/events"' in r.text and 'route="/v1/workers/{name}/reports"' in r.text


def test_every_hot_route_is_planned(tmp_path):
    ctl = Controller(Settings(state_dir=tmp_path / "state"))
    ctl.open()
    try:
        app = create_app(ctl)
        hot = {r.path for r in fastlane._routes(app.routes) if getattr(getattr(r, "endpoint", None), "__xce_hot__", False)}
        lane = fastlane.FastLane(None, app)
        assert hot == {p.route.path for p in lane.plans()}
        assert {"/v1/jobs", "/v1/sched/events", "/v1/sched/decisions", "/v1/workers/{name}/actions",
                "/v1/workers/{name}/reports", "/v1/workers/{name}/load"} <= hot
    finally:
        ctl.close()
