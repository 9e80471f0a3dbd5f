"""What the scheduler is shown of jobs the controller holds back (held, begin time, array limit), and
the pend reason of a job the cluster has shrunk under, over the real feed and decision protocol."""

from __future__ import annotations

import pytest
from test_controller_protocol import Cluster, dispatch

pytestmark = pytest.mark.integration


def test_a_held_job_is_kept_from_the_scheduler_and_pushed_when_released(api):
    cl = Cluster(api, "hgate1")
    held = cl.submit(hold=True)
    assert cl.events() == []  # the scheduler never hears of it while it is held
    synced = cl.api("scheduler").get("/v1/sched/state").json()["events"]  # nor does a scheduler that resyncs
    assert held not in [j["jobid"] for e in synced if e["type"] == "JOBS_PUSH" for j in e["payload"]["jobs"]]
    r = cl.user.post("/v1/jobs/act", json={"action": "release", "jobs": [str(held)]})
    assert r.json()["results"][0]["ok"], r.text
    (push,) = cl.events()
    assert push["type"] == "JOBS_PUSH" and [j["jobid"] for j in push["payload"]["jobs"]] == [held]


def test_holding_a_job_the_scheduler_knows_withdraws_it_and_refuses_its_dispatch(api):
    cl = Cluster(api, "hgate2")
    jobid = cl.submit()
    assert [e["type"] for e in cl.events()] == ["JOBS_PUSH"]
    r = cl.user.post("/v1/jobs/act", json={"action": "hold", "jobs": [str(jobid)]})
    assert r.json()["results"][0]["message"] == f"Job <{jobid}> is held."
    (gone,) = cl.events()
    assert gone["type"] == "JOB_STATE_CHANGE" and gone["payload"]["state"] == "EXIT"
    assert gone["payload"]["reason"].startswith("withdrawn: held by user-hgate2")
    # a dispatch decided before the scheduler read that is refused, and the job stays PEND and held
    (res,) = cl.decide(dispatch(jobid, ("hgate2", 1)))
    assert res["status"] == "rejected" and cl.job(jobid)["state"] == "PEND"
    cl.decide({"op": "PEND", "seq": 2, "jobid": jobid, "reasons": [{"step": "slots", "text": "busy"}]})
    assert cl.job(jobid)["pend_reasons"][0]["step"] == "held"  # the controller's reason stands


def test_an_array_limit_releases_elements_as_others_end(api):
    cl = Cluster(api, "hgate3", slots=8)
    first = cl.submit(array="1-5%2", command=["true"])
    (push,) = cl.events()
    assert [j["jobid"] for j in push["payload"]["jobs"]] == [first, first + 1]
    assert cl.job(first + 2)["pend_reasons"] == [{"step": "limit", "text": f"array {first} runs at most 2 elements "
                                                  f"at once (%2)"}]
    cl.decide(dispatch(first, ("hgate3", 1)))
    cl.report(first, status="started", pid=1)
    cl.report(first, status="finished", exit_code=0)
    events = cl.events(wait=5)
    while not any(e["type"] == "JOBS_PUSH" for e in events):
        events += cl.events(wait=5)
    pushed = [j["jobid"] for e in events if e["type"] == "JOBS_PUSH" for j in e["payload"]["jobs"]]
    assert pushed == [first + 2]


def test_the_pend_reason_says_so_when_the_cluster_shrinks_under_a_job(api):
    cl = Cluster(api, "hgate4", slots=4)
    total = sum(h["resources"].get("slots", 0) for h in api("admin").get("/v1/hosts").json()["hosts"])
    jobid = cl.submit(tasks=total)  # exactly what the cluster has: accepted
    r = cl.worker.post("/v1/workers/register", json={"name": "hgate4", "resources": {"slots": 2}, "load": {},
                                                     "running": []})
    assert r.status_code == 200, r.text
    cl.decide({"op": "PEND", "seq": 3, "jobid": jobid, "reasons": [{"step": "slots", "text": "short by 2"}]})
    reason = cl.job(jobid)["pend_reasons"]
    assert reason == [{"step": "cluster", "text": f"cannot run on the current cluster: needs slots {total}, short by "
                       f"slots 2 (the cluster has {total - 2} slots on {len(api('admin').get('/v1/hosts').json()['hosts'])} "
                       f"hosts)"}]


def test_modifying_a_pending_jobs_shape_gives_the_scheduler_the_new_one(api):
    cl = Cluster(api, "hgate5", slots=4)
    jobid = cl.submit()
    cl.events()
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"tasks": 2, "request": "rusage[mem=1G]"})
    assert r.status_code == 200, r.text
    gone, push = cl.events()
    assert (gone["type"], gone["payload"]["state"], gone["payload"]["reason"]) == ("JOB_STATE_CHANGE", "EXIT",
                                                                                   "withdrawn: modified")
    (spec,) = push["payload"]["jobs"]
    assert (spec["jobid"], spec["tasks"], spec["request"]) == (jobid, 2, "rusage[mem=1G]")
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"tasks": 10_000})
    assert r.status_code == 422 and "can never run on this cluster" in r.text
