"""Workers that stop reporting: unreachable, their running jobs UNKWN (holding their slots), undelivered
ones requeued; their return; hosts declared down, closed and opened."""

from __future__ import annotations

import threading
import time

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller

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

        wait_for(lambda: admin.get(f"/v1/jobs/{delivered}").json()["state"] == "UNKWN", timeout=8)
        unknown = admin.get(f"/v1/jobs/{delivered}").json()
        assert unknown["reason"].startswith("unknown: worker quiet stopped reporting; the job keeps its slots")
        assert [p["host"] for p in unknown["placement"]] == ["quiet"]  # it still holds its place there
        requeued = admin.get(f"/v1/jobs/{undelivered}").json()
        assert requeued["state"] == "PEND" and requeued["placement"] == []
        assert "stopped reporting before it took the job" in requeued["reason"]
        assert admin.get(f"/v1/jobs/{on_steady}").json()["state"] == "RUN"
        hosts = {h["name"]: (h["status"], h["slots_used"]) for h in u.get("/v1/hosts").json()["hosts"]}
        assert hosts == {"quiet": ("unreach", 1), "steady": ("ok", 1)}

        events = [e["event"] for e in s.get("/v1/sched/events", params={"after": cursor}).json()["events"]]
        changes = {(e["payload"]["jobid"], e["payload"]["state"]) for e in events if e["type"] == "JOB_STATE_CHANGE"}
        assert changes == {(delivered, "UNKWN"), (undelivered, "PEND")}
        (push,) = [e for e in events if e["type"] == "WORKERS_PUSH"]
        assert [(h["name"], h["status"]) for h in push["payload"]["workers"]] == [("quiet", "unreach")]

        # no new work for an unreachable host
        res = decide(undelivered, "quiet")
        assert res["status"] == "rejected" and "host quiet is unreach" in res["reason"]

        # it comes back (it never restarted: a network partition) still running the job: RUN again
        r = w.post("/v1/workers/quiet/load", json={"load": {"r1m": 1.0}, "usage": {str(delivered): {"memory_rss": 5}}})
        assert r.status_code == 200 and r.json()["kill"] == []
        assert {h["name"]: h["status"] for h in u.get("/v1/hosts").json()["hosts"]}["quiet"] == "ok"
        back = admin.get(f"/v1/jobs/{delivered}").json()
        assert back["state"] == "RUN" and back["reason"] == "running: worker quiet reported it still runs"
    finally:
        stop.set()
        beat.join()


def test_declared_down_host_ends_or_requeues_its_jobs_and_its_return_kills_them(api):
    w, s, u, admin = api("worker"), api("scheduler"), api("ann"), api("admin")
    for name in ("gone", "other"):
        assert w.post("/v1/workers/register", json={"name": name, "resources": {"slots": 2}, "running": []}
                      ).status_code == 200
    rerun = u.post("/v1/jobs", json={"command": ["sleep", "9"], "rerunnable": True}).json()["jobid"]
    once = u.post("/v1/jobs", json={"command": ["sleep", "9"]}).json()["jobid"]
    assert admin.get(f"/v1/jobs/{rerun}").json()["rerunnable"] is True
    decide = lambda jobid, host: s.post("/v1/sched/decisions", json={"decisions": [  # noqa: E731
        {"id": f"{jobid}-{host}-{time.monotonic_ns()}", "ts": 0,
         "decision": {"op": "DISPATCH", "seq": 0, "jobid": jobid, "placement": [[host, 1]]}}]}).json()["results"][0]
    for jobid in (rerun, once):
        assert decide(jobid, "gone")["status"] == "applied"

    # without --requeue every job ends; with it, the rerunnable one waits to run elsewhere
    r = admin.post("/v1/admin/hosts/gone/down", json={"requeue": True})
    assert r.status_code == 200, r.text
    assert r.json() == {"name": "gone", "status": "down", "ended": [once], "requeued": [rerun]}
    again = admin.get(f"/v1/jobs/{rerun}").json()
    assert again["state"] == "PEND" and again["placement"] == []
    assert again["reason"] == "requeued: host gone declared down by admin (the job is rerunnable)"
    ended = admin.get(f"/v1/jobs/{once}").json()
    assert ended["state"] == "EXIT" and ended["reason"] == "host lost: gone declared down by admin"
    assert {h["name"]: h["status"] for h in u.get("/v1/hosts").json()["hosts"]}["gone"] == "down"
    assert "host gone is down" in decide(rerun, "gone")["reason"]
    assert admin.post("/v1/admin/hosts/nowhere/down", json={}).status_code == 404
    assert u.post("/v1/admin/hosts/other/down", json={}).status_code == 403

    # the worker comes back still running both: it is told to kill them before anything else
    back = w.post("/v1/workers/register", json={"name": "gone", "resources": {"slots": 2}, "running": [rerun, once]})
    assert back.status_code == 200 and back.json()["kill"] == sorted([rerun, once])


def test_closed_host_gets_no_new_jobs_and_says_why(api):
    w, s, u, admin = api("worker"), api("scheduler"), api("ann"), api("admin")
    assert w.post("/v1/workers/register", json={"name": "node7", "resources": {"slots": 2}, "running": []}
                  ).status_code == 200
    cursor = s.get("/v1/sched/state").json()["seq"]
    r = admin.post("/v1/admin/hosts/node7/close", json={"reason": "disk replacement"})
    assert r.status_code == 200 and r.json()["closed"] == "disk replacement"
    host = u.get("/v1/hosts/node7").json()
    assert (host["status"], host["closed"]) == ("ok", "disk replacement")
    events = [e["event"] for e in s.get("/v1/sched/events", params={"after": cursor}).json()["events"]]
    assert [[(h["name"], h["status"]) for h in e["payload"]["workers"]] for e in events
            if e["type"] == "WORKERS_PUSH"] == [[("node7", "closed")]]
    job = u.post("/v1/jobs", json={"command": ["true"]}).json()["jobid"]
    res = s.post("/v1/sched/decisions", json={"decisions": [
        {"id": "c1", "ts": 0, "decision": {"op": "DISPATCH", "seq": 0, "jobid": job, "placement": [["node7", 1]]}}]}
                 ).json()["results"][0]
    assert res["status"] == "rejected" and "host node7 is closed" in res["reason"]
    # a report from its worker does not reopen it; an administrator does
    w.post("/v1/workers/node7/load", json={"load": {"r1m": 0.1}})
    assert u.get("/v1/hosts/node7").json()["closed"] == "disk replacement"
    assert admin.post("/v1/admin/hosts/node7/open").status_code == 200
    assert u.get("/v1/hosts/node7").json()["closed"] is None
