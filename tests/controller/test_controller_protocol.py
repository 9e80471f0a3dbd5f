"""The scheduler feed, the decision protocol and the worker protocol, end to end over HTTP."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

pytestmark = pytest.mark.integration


class Cluster:
    """A scheduler and a worker played by the test, plus a user."""

    def __init__(self, api, host: str, slots: int = 4):
        self.api = api
        self.sched = api("scheduler")
        self.worker = api("worker")
        self.user = api(f"user-{host}")
        self.host = host
        self.action_cursor = 0
        r = self.worker.post("/v1/workers/register", json={
            "name": host, "resources": {"slots": slots, "maxmem": 16 << 30, "ncpus": slots, "type": "X86_64",
                                        "xce.io/cpu-milli": slots * 1000},
            "load": {"mem": 8 << 30, "r1m": 0.25}, "running": []})
        assert r.status_code == 200, r.text
        self.cursor = self.sched.get("/v1/sched/state").json()["seq"]

    def submit(self, **body) -> int:
        body.setdefault("command", ["sleep", "100"])
        r = self.user.post("/v1/jobs", json=body)
        assert r.status_code == 201, r.text
        return r.json()["jobid"]

    def events(self, wait: float = 0) -> list[dict]:
        r = self.sched.get("/v1/sched/events", params={"after": self.cursor, "wait": wait})
        assert r.status_code == 200, r.text
        page = r.json()
        self.cursor = page["last_seq"]
        return [e["event"] for e in page["events"]]

    def decide(self, *decisions: dict) -> list[dict]:
        body = {"decisions": [{"id": d.pop("id", uuid.uuid4().hex), "ts": 1, "decision": d} for d in decisions]}
        r = self.sched.post("/v1/sched/decisions", json=body)
        assert r.status_code == 200, r.text
        return r.json()["results"]

    def actions(self, wait: float = 0) -> list[dict]:
        r = self.worker.get(f"/v1/workers/{self.host}/actions", params={"after": self.action_cursor, "wait": wait})
        assert r.status_code == 200, r.text
        page = r.json()
        self.action_cursor = page["last_id"]
        return page["actions"]

    def report(self, jobid: int, **body) -> dict:
        r = self.worker.post(f"/v1/workers/{self.host}/jobs/{jobid}/status", json=body)
        assert r.status_code == 200, r.text
        return r.json()

    def job(self, jobid: int) -> dict:
        return self.api("admin").get(f"/v1/jobs/{jobid}").json()


def dispatch(jobid, *placement):
    return {"op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [list(p) for p in placement]}


def test_dispatch_run_usage_finish(api):
    cl = Cluster(api, "hflow1")
    jobid = cl.submit(tasks=2, env={"X": "1"}, limits={"mem": 1 << 30}, stdout="/tmp/o.%J")
    (push,) = cl.events()
    assert push["type"] == "JOBS_PUSH" and push["payload"]["jobs"][0]["jobid"] == jobid

    (res,) = cl.decide(dispatch(jobid, ("hflow1", 2)) | {"id": f"d-{jobid}"})
    assert res == {"id": f"d-{jobid}", "status": "applied"}
    job = cl.job(jobid)
    assert job["state"] == "RUN" and job["placement"] == [{"host": "hflow1", "tasks": 2}] and job["start_time"]
    assert [(e["type"], e["payload"]["state"]) for e in cl.events()] == [("JOB_STATE_CHANGE", "RUN")]

    (start,) = cl.actions()
    assert start["kind"] == "start" and start["jobid"] == jobid
    rec = start["job"]
    assert rec["command"] == ["sleep", "100"] and rec["env"] == {"X": "1"} and rec["limits"] == {"mem": 1 << 30}
    assert rec["stdout"] == f"/tmp/o.{jobid}" and rec["placement"] == [["hflow1", 2]] and rec["user"] == "user-hflow1"
    assert cl.actions() == []  # acknowledged by after=

    cl.report(jobid, status="started", pid=4242)
    # A worker from before milliseconds says cpu_time in whole seconds: read as milliseconds.
    cl.report(jobid, status="usage", usage={"memory_rss": 100, "cpu_time": 10})
    cl.report(jobid, status="usage", usage={"memory_rss": 300, "cpu_ms": 30000})
    usage = cl.job(jobid)["usage"]
    assert usage["last"] == {"cpu_ms": 30000, "memory_rss": 300} and usage["peak"]["memory_rss"] == 300
    assert usage["mean"]["memory_rss"] == 200 and usage["samples"] == 2
    rusage = [e for e in cl.events() if e["type"] == "JOB_RUSAGE"]
    assert [e["payload"] for e in rusage] == [{"jobid": jobid, "usage": {"cpu_ms": 10000, "memory_rss": 100}},
                                             {"jobid": jobid, "usage": {"cpu_ms": 30000, "memory_rss": 300}}]

    assert cl.report(jobid, status="finished", exit_code=0)["state"] == "DONE"
    assert [(e["type"], e["payload"]["state"]) for e in cl.events()] == [("JOB_STATE_CHANGE", "DONE")]
    assert [h["to"] for h in cl.job(jobid)["history"]] == ["PEND", "RUN", "DONE"]


def test_failure_exit_code_gives_exit(api):
    cl = Cluster(api, "hflow2")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hflow2", 1)))
    cl.actions()
    assert cl.report(jobid, status="finished", exit_code=3)["state"] == "EXIT"
    job = cl.job(jobid)
    assert job["exit_code"] == 3 and job["reason"] == "exit code 3"


def test_decisions_are_idempotent_by_id(api):
    cl = Cluster(api, "hidem")
    jobid = cl.submit()
    cl.events()
    d = dispatch(jobid, ("hidem", 1))
    assert cl.decide(dict(d, id="same-id"))[0]["status"] == "applied"
    assert len(cl.events()) == 1
    assert cl.decide(dict(d, id="same-id"))[0] == {"id": "same-id", "status": "duplicate"}
    assert cl.events() == [] and len(cl.actions()) == 1


def test_rejected_dispatch_tells_the_scheduler_the_real_state(api):
    cl = Cluster(api, "hrej")
    killed = cl.submit()
    waiting = cl.submit()
    cl.user.post(f"/v1/jobs/{killed}/kill")
    cl.events()
    res = cl.decide(dispatch(killed, ("hrej", 1)), dispatch(waiting, ("nosuchhost", 1)), dispatch(999999, ("hrej", 1)))
    assert [r["status"] for r in res] == ["rejected"] * 3
    assert "it is EXIT" in res[0]["reason"] and "host nosuchhost is not registered" in res[1]["reason"]
    evs = [(e["payload"]["jobid"], e["payload"]["state"]) for e in cl.events()]
    assert evs == [(killed, "EXIT"), (waiting, "PEND")]
    assert cl.job(waiting)["state"] == "PEND" and cl.actions() == []


def test_pend_reasons_are_stored_only_when_they_change(api):
    cl = Cluster(api, "hpend")
    jobid = cl.submit(tasks=4)  # a job the cluster could run (one it never could gets its own reason)
    cl.events()
    reasons = [{"step": "alloc", "text": "needs slots 64, short by slots 60", "resource": "slots", "needed": 64,
                "short": 60}]
    pend = {"op": "PEND", "seq": 2, "jobid": jobid, "reasons": reasons}
    assert cl.decide(dict(pend))[0]["status"] == "applied"
    assert cl.decide(dict(pend))[0]["status"] == "unchanged"
    assert cl.events() == []  # pend reasons are not events
    assert cl.job(jobid)["pend_reasons"] == reasons


def test_preempt_suspends_victims_and_resume_brings_them_back(api):
    cl = Cluster(api, "hpre")
    victim = cl.submit()
    urgent = cl.submit(queue="high")
    cl.decide(dispatch(victim, ("hpre", 1)))
    cl.actions()
    cl.events()
    (res,) = cl.decide({"op": "PREEMPT", "seq": 3, "preempting_jobid": urgent, "victim_jobids": [victim, urgent],
                        "signal": "SIGTSTP"})
    assert res["status"] == "partial" and res["suspended"] == [victim]
    assert res["rejected"][0]["jobid"] == urgent
    assert cl.job(victim)["state"] == "SSUSP" and cl.job(victim)["reason"] == f"preempted by job {urgent}"
    (act,) = cl.actions()
    assert (act["kind"], act["jobid"], act["signal"]) == ("suspend", victim, "SIGTSTP")
    assert [(e["payload"]["jobid"], e["payload"]["state"]) for e in cl.events()] == [(victim, "SSUSP"), (urgent, "PEND")]

    # the owner may not resume what the system suspended
    r = cl.user.post(f"/v1/jobs/{victim}/resume")
    assert r.status_code == 403 and "suspended by the system" in r.json()["detail"]

    assert cl.decide({"op": "RESUME", "seq": 4, "jobid": victim, "signal": "SIGCONT"})[0]["status"] == "applied"
    (act,) = cl.actions()
    assert (act["kind"], act["signal"]) == ("resume", "SIGCONT")
    assert cl.job(victim)["state"] == "RUN"
    assert cl.decide({"op": "RESUME", "seq": 5, "jobid": victim})[0]["status"] == "rejected"


def test_user_suspend_resume_and_kill_reach_the_worker(api):
    cl = Cluster(api, "hctl")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hctl", 1)))
    cl.actions()
    assert cl.user.post(f"/v1/jobs/{jobid}/suspend").json()["state"] == "USUSP"
    assert cl.job(jobid)["reason"] == "suspended by user-hctl"
    assert cl.user.post(f"/v1/jobs/{jobid}/resume").json()["state"] == "RUN"
    assert cl.job(jobid)["reason"] == "resumed by user-hctl"
    assert cl.user.post(f"/v1/jobs/{jobid}/kill").json()["state"] == "EXIT"
    assert [(a["kind"], a.get("signal")) for a in cl.actions()] == [
        ("suspend", "SIGSTOP"), ("resume", "SIGCONT"), ("kill", "SIGTERM")]
    # the process ends later: its exit status is recorded, the verdict stays
    assert cl.report(jobid, status="finished", exit_code=None, signal="SIGTERM")["state"] == "EXIT"
    job = cl.job(jobid)
    assert job["reason"] == "killed by user-hctl" and job["exit_signal"] == "SIGTERM"


def test_killing_an_undelivered_dispatch_withdraws_the_start(api):
    cl = Cluster(api, "hwd")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hwd", 1)))
    cl.user.post(f"/v1/jobs/{jobid}/kill")
    assert cl.actions() == []


def test_worker_rejection_requeues(api):
    cl = Cluster(api, "hrq")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hrq", 1)))
    cl.actions()
    cl.events()
    assert cl.report(jobid, status="rejected", reason="draining")["state"] == "PEND"
    job = cl.job(jobid)
    assert job["placement"] == [] and "refused it (draining)" in job["reason"]
    assert [(e["payload"]["state"]) for e in cl.events()] == ["PEND"]


def test_reregistration_reconciles_running_jobs(api):
    cl = Cluster(api, "hrec")
    kept, gone = cl.submit(), cl.submit()
    cl.decide(dispatch(kept, ("hrec", 1)), dispatch(gone, ("hrec", 1)))
    cl.actions()
    r = cl.worker.post("/v1/workers/register", json={"name": "hrec", "resources": {"slots": 4},
                                                      "running": [kept, 777777]})
    assert r.json()["lost"] == [gone] and r.json()["kill"] == [777777]
    assert cl.job(kept)["state"] == "RUN"
    assert cl.job(gone)["state"] == "EXIT" and cl.job(gone)["reason"] == "lost: worker hrec restarted without it"
    # The answer names it and the worker kills it before taking work; a queued kill action could
    # reach a run of the same job dispatched here after the registration.
    assert cl.actions() == []


def test_reregistration_kills_an_earlier_run_of_a_job_dispatched_again(api):
    """The worker says which run (the start's ``run``) it has: a job requeued and dispatched again
    is not taken to run there on the strength of its id."""
    cl = Cluster(api, "hrun")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hrun", 1)))
    (start,) = cl.actions()
    run = start["job"]["run"]
    body = {"name": "hrun", "resources": {"slots": 4}, "running": [jobid]}
    r = cl.worker.post("/v1/workers/register", json={**body, "runs": {str(jobid): run}})
    assert r.json()["kill"] == [] and cl.job(jobid)["state"] == "RUN"
    r = cl.worker.post("/v1/workers/register", json={**body, "runs": {str(jobid): run - 1}})
    assert r.json()["kill"] == [jobid]
    assert cl.job(jobid)["reason"] == "lost: worker hrun restarted without it"
    r = cl.worker.post("/v1/workers/register", json={**body, "runs": {"x": 1}})
    assert r.status_code == 422


def test_load_reports_become_resval_deltas(api):
    cl = Cluster(api, "hload")
    cl.events()
    w = cl.worker
    assert w.post("/v1/workers/hload/load", json={"load": {"mem": 8 << 30, "r1m": 0.5}}).status_code == 200
    assert w.post("/v1/workers/hload/load", json={"load": {"mem": 8 << 30, "r1m": 0.5}}).status_code == 200
    (ev,) = cl.events()
    assert ev == {"type": "RESVALS_DELTA", "ts": ev["ts"], "payload": {"values": {"hload": {"r1m": 0.5}}}}
    hosts = {h["name"]: h for h in cl.user.get("/v1/load").json()["hosts"]}
    assert hosts["hload"]["load"] == {"mem": 8 << 30, "r1m": 0.5}
    assert w.post("/v1/workers/nowhere/load", json={"load": {}}).status_code == 404


def test_registration_refuses_bad_resource_names_naming_each(api):
    r = api("worker").post("/v1/workers/register", json={"name": "hbad", "resources": {
        "slots": 4, "gpu": 1, "xce.io/warp-drive": 1, "example.com/su2-processes": 1.5, "xce.io/gpu": 2,
        "example.com/ok": 3}})
    assert r.status_code == 422
    locs = {tuple(e["loc"]): e["msg"] for e in r.json()["detail"]}
    assert set(locs) == {("body", "resources", "gpu"), ("body", "resources", "xce.io/warp-drive"),
                         ("body", "resources", "example.com/su2-processes")}
    assert "domain prefix" in locs[("body", "resources", "gpu")]
    assert "reserved" in locs[("body", "resources", "xce.io/warp-drive")]


def test_hosts_view_and_config_overrides(api):
    cl = Cluster(api, "h2", slots=8)  # [hosts.h2] slots = 2 in the configuration
    jobid = cl.submit(tasks=2)
    cl.decide(dispatch(jobid, ("h2", 2)))
    hosts = {h["name"]: h for h in cl.user.get("/v1/hosts").json()["hosts"]}
    assert hosts["h2"]["resources"]["slots"] == 2 and hosts["h2"]["slots_used"] == 2 and hosts["h2"]["njobs"] == 1
    state = cl.sched.get("/v1/sched/state").json()
    (workers,) = [e for e in state["events"] if e["type"] == "WORKERS_PUSH"]
    assert {w["name"]: w["values"]["slots"] for w in workers["payload"]["workers"]}["h2"] == 2


def test_full_state_sync_is_consistent_with_the_feed(api):
    cl = Cluster(api, "hsync")
    running = cl.submit(tasks=2)
    pending = cl.submit()
    cl.decide(dispatch(running, ("hsync", 2)))
    state = cl.sched.get("/v1/sched/state").json()
    types = [e["type"] for e in state["events"]]
    assert types[:3] == ["CONFIG_PUSH", "WORKERS_PUSH", "RESVALS_FULL"] and set(types[3:]) == {"JOBS_PUSH"}
    jobs = {j["jobid"]: j for e in state["events"][3:] for j in e["payload"]["jobs"]}
    assert jobs[running]["state"] == "RUN" and jobs[running]["placement"] == [["hsync", 2]]
    assert jobs[pending]["state"] == "PEND" and all(j["state"] not in ("DONE", "EXIT") for j in jobs.values())
    assert state["events"][2]["payload"]["values"]["hsync"] == {"mem": 8 << 30, "r1m": 0.25}
    page = cl.sched.get("/v1/sched/events", params={"after": state["seq"]}).json()
    assert page["events"] == [] and page["last_seq"] == state["seq"]


def test_long_poll_wakes_on_commit(api):
    cl = Cluster(api, "hpoll")
    cl.events()
    timer = threading.Timer(0.3, lambda: cl.submit())
    timer.start()
    t0 = time.monotonic()
    evs = cl.events(wait=10)
    assert [e["type"] for e in evs] == ["JOBS_PUSH"] and time.monotonic() - t0 < 5
    t0 = time.monotonic()
    assert cl.events(wait=0.3) == [] and time.monotonic() - t0 >= 0.25
    # a worker's action long-poll wakes when a dispatch is committed
    jobid = evs[0]["payload"]["jobs"][0]["jobid"]
    timer = threading.Timer(0.3, lambda: cl.decide(dispatch(jobid, ("hpoll", 1))))
    timer.start()
    assert [a["kind"] for a in cl.actions(wait=10)] == ["start"]


def test_metrics(api):
    cl = Cluster(api, "hmet")
    cl.submit()
    text = cl.user.get("/metrics").text
    assert 'xce_jobs{queue="normal",state="PEND"}' in text
    assert "xce_jobs_submitted_total" in text and "xce_event_log_lag" in text
    assert 'xce_api_request_seconds_bucket{le="0.005",method="POST",route="/v1/jobs",status="201"}' in text
    assert "xce_decisions_total" in text or "xce_decisions_created" not in text
    assert 'xce_workers{status="ok"}' in text


def test_batched_reports_apply_in_order_in_one_transaction(api):
    cl = Cluster(api, "hbatch1")
    short, other, elsewhere = cl.submit(command=["true"]), cl.submit(), cl.submit()
    cl.events()
    cl.decide(dispatch(short, ("hbatch1", 1)), dispatch(other, ("hbatch1", 1)))
    cl.events()
    r = cl.worker.post("/v1/workers/hbatch1/reports", json={"reports": [
        {"jobid": short, "status": "started", "pid": 10},
        {"jobid": elsewhere, "status": "finished", "exit_code": 0},            # not placed here: refused alone
        {"jobid": other, "status": "usage", "usage": {"memory_rss": 1 << 20}},
        {"jobid": short, "status": "finished", "exit_code": 0, "usage": {"memory_rss": 2 << 20}},
        {"jobid": other, "status": "rejected", "reason": "x"},                 # fine: it is RUN
        {"jobid": other, "status": "rejected", "reason": "again"},             # now PEND, nowhere: refused alone
    ]})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert [x.get("status", x.get("state")) for x in res] == ["RUN", 409, "RUN", "DONE", "PEND", 409]
    assert res[1]["error"] == f"job {elsewhere} is not placed on hbatch1 (it is PEND)"
    assert res[5]["error"] == f"job {other} is not placed on hbatch1 (it is PEND)"  # requeued just before
    assert cl.job(short)["state"] == "DONE" and cl.job(short)["usage"]["peak"]["memory_rss"] == 2 << 20
    assert cl.job(elsewhere)["state"] == "PEND"
    # the scheduler sees the same order the worker reported
    assert [(e["type"], e["payload"].get("jobid"), e["payload"].get("state")) for e in cl.events()] == [
        ("JOB_RUSAGE", other, None), ("JOB_STATE_CHANGE", short, "DONE"), ("JOB_STATE_CHANGE", other, "PEND")]


def test_batched_reports_refuse_bad_usage_alone_and_unknown_workers_whole(api):
    cl = Cluster(api, "hbatch2")
    jobid = cl.submit()
    cl.decide(dispatch(jobid, ("hbatch2", 1)))
    r = cl.worker.post("/v1/workers/hbatch2/reports", json={"reports": [
        {"jobid": jobid, "status": "usage", "usage": {"memory_rss": -5}},
        {"jobid": jobid, "status": "usage", "usage": {"memory_rss": 5}}]})
    assert r.status_code == 200 and [x.get("status") for x in r.json()["results"]] == [422, None]
    assert cl.job(jobid)["usage"]["samples"] == 1
    r = cl.worker.post("/v1/workers/nosuchhost/reports", json={"reports": [{"jobid": jobid, "status": "usage"}]})
    assert r.status_code == 404 and "not registered" in r.json()["detail"]
    r = cl.worker.post("/v1/workers/hbatch2/reports", json={"reports": [{"jobid": 0, "status": "usage"}]})
    assert r.status_code == 422
