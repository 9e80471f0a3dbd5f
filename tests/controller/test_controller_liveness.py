"""Workers that stop reporting: unavailable, their jobs lost or requeued, and their return."""

from __future__ import annotations

import threading
import time

import pytest

from controller_harness import Api, write_config
from xce.controller.launch import start_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    sd = tmp_path_factory.mktemp("live")
    ctl = start_controller(sd, config=str(write_config(sd)), extra_args=("--worker-timeout", "1"))
    a = Api(ctl)
    yield a
    a.close()
    ctl.stop()


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_silent_worker_is_given_up_and_comes_back(api):
    w, s, u, admin = api("worker"), api("scheduler"), api("ann"), api("admin")
    stop = threading.Event()

    def heartbeat():
        while not stop.is_set():
            w.post("/v1/workers/steady/load", json={"load": {"r1m": 0.1}})
            stop.wait(0.2)

    for name in ("quiet", "steady"):
        assert w.post("/v1/workers/register", json={"name": name, "resources": {"slots": 4}, "running": []}
                      ).status_code == 200
    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    try:
        delivered = u.post("/v1/jobs", json={"command": ["sleep", "9"]}).json()["jobid"]
        undelivered = u.post("/v1/jobs", json={"command": ["sleep", "9"]}).json()["jobid"]
        on_steady = u.post("/v1/jobs", json={"command": ["sleep", "9"]}).json()["jobid"]
        decide = lambda jobid, host: s.post("/v1/sched/decisions", json={"decisions": [  # noqa: E731
            {"id": f"{jobid}-{host}-{time.monotonic_ns()}", "ts": 0,
             "decision": {"op": "DISPATCH", "seq": 0, "jobid": jobid, "placement": [[host, 1]]}}]}).json()["results"][0]
        assert decide(delivered, "quiet")["status"] == "applied"
        assert [a["jobid"] for a in w.get("/v1/workers/quiet/actions").json()["actions"]] == [delivered]
        assert decide(undelivered, "quiet")["status"] == "applied"
        assert decide(on_steady, "steady")["status"] == "applied"
        cursor = s.get("/v1/sched/state").json()["seq"]

        wait_for(lambda: admin.get(f"/v1/jobs/{delivered}").json()["state"] == "EXIT", timeout=8)
        lost = admin.get(f"/v1/jobs/{delivered}").json()
        assert lost["reason"] == "lost: worker quiet stopped reporting"
        requeued = admin.get(f"/v1/jobs/{undelivered}").json()
        assert requeued["state"] == "PEND" and requeued["placement"] == []
        assert "stopped reporting before it took the job" in requeued["reason"]
        assert admin.get(f"/v1/jobs/{on_steady}").json()["state"] == "RUN"
        hosts = {h["name"]: h["status"] for h in u.get("/v1/hosts").json()["hosts"]}
        assert hosts == {"quiet": "unavail", "steady": "ok"}

        events = [e["event"] for e in s.get("/v1/sched/events", params={"after": cursor}).json()["events"]]
        changes = {(e["payload"]["jobid"], e["payload"]["state"]) for e in events if e["type"] == "JOB_STATE_CHANGE"}
        assert changes == {(delivered, "EXIT"), (undelivered, "PEND")}
        (push,) = [e for e in events if e["type"] == "WORKERS_PUSH"]
        assert [(h["name"], h["status"]) for h in push["payload"]["workers"]] == [("quiet", "unavail")]

        # no new work for an unavailable host
        res = decide(undelivered, "quiet")
        assert res["status"] == "rejected" and "host quiet is unavail" in res["reason"]

        # it comes back, still running the job the controller gave up on: that job must be stopped
        r = w.post("/v1/workers/quiet/load", json={"load": {"r1m": 1.0}, "usage": {str(delivered): {"memory_rss": 5}}})
        assert r.status_code == 200 and r.json()["kill"] == [delivered]
        assert {h["name"]: h["status"] for h in u.get("/v1/hosts").json()["hosts"]}["quiet"] == "ok"
        assert [(a["kind"], a["jobid"]) for a in w.get("/v1/workers/quiet/actions").json()["actions"]] == [
            ("kill", delivered)]
    finally:
        stop.set()
        beat.join()
