"""A parallel job on every host of its placement, at the protocol level: each host gets the start
with the job's launch key and the task servers, usage is summed over hosts, kill and suspend reach
every host, and the end of the job's command stops its other hosts."""

from __future__ import annotations

import pytest
from test_controller_protocol import Cluster, dispatch

pytestmark = pytest.mark.integration


def test_every_host_of_a_placement_gets_the_job(api):
    a = Cluster(api, "spa")
    b = Cluster(api, "spb")
    # b's task server is learnt from a load report too (a restarted controller learns it so).
    r = b.worker.post("/v1/workers/spb/load", json={"load": {"r1m": 0.1}, "task_address": "10.9.9.2:7000"})
    assert r.status_code == 200, r.text
    r = a.worker.post("/v1/workers/register", json={"name": "spa", "resources": {"slots": 4}, "running": [],
                                                      "task_address": "10.9.9.1:7000"})
    assert r.status_code == 200, r.text
    jobid = a.submit(tasks=3)
    assert a.decide(dispatch(jobid, ("spa", 2), ("spb", 1)))[0]["status"] == "applied"
    (sa,), (sb,) = a.actions(), b.actions()
    assert sa["kind"] == sb["kind"] == "start"
    assert sa["job"]["launch_key"] == sb["job"]["launch_key"] and len(sa["job"]["launch_key"]) == 32
    assert sa["job"]["task_servers"] == {"spa": "10.9.9.1:7000", "spb": "10.9.9.2:7000"}

    a.report(jobid, status="usage", usage={"memory_rss": 100, "cpu_ms": 1000})
    b.report(jobid, status="usage", usage={"memory_rss": 50, "cpu_ms": 2000})
    b.report(jobid, status="usage", usage={"memory_rss": 70, "cpu_ms": 3000})
    usage = a.job(jobid)["usage"]
    assert usage["last"] == {"cpu_ms": 4000, "memory_rss": 170}
    assert usage["hosts"] == {"spa": {"cpu_ms": 1000, "memory_rss": 100}, "spb": {"cpu_ms": 3000, "memory_rss": 70}}

    # A host that holds nothing of the job is refused.
    c = Cluster(api, "spc")
    r = c.worker.post(f"/v1/workers/spc/jobs/{jobid}/status", json={"status": "usage", "usage": {"memory_rss": 1}})
    assert r.status_code == 409

    assert api("admin").post(f"/v1/jobs/{jobid}/suspend").status_code == 200
    assert [x["kind"] for x in a.actions()] == ["suspend"] and [x["kind"] for x in b.actions()] == ["suspend"]
    assert api("admin").post(f"/v1/jobs/{jobid}/resume").status_code == 200
    a.actions(), b.actions()
    # A secondary's end does not end the job; the command's end on the first host stops the others.
    assert b.report(jobid, status="finished", exit_code=None)["state"] == "RUN"
    assert a.report(jobid, status="finished", exit_code=0)["state"] == "DONE"
    assert [x["kind"] for x in b.actions()] == ["kill"] and a.actions() == []


def test_a_secondary_that_cannot_take_the_job_fails_it_and_stops_the_others(api):
    a = Cluster(api, "sfa")
    b = Cluster(api, "sfb")
    jobid = a.submit(tasks=2)
    a.decide(dispatch(jobid, ("sfa", 1), ("sfb", 1)))
    a.actions(), b.actions()
    job = b.report(jobid, status="start_failed", reason="cannot create the job's control group on sfb: no space")
    assert job["state"] == "EXIT"
    assert "could not start on sfb" in a.job(jobid)["reason"]
    assert [x["kind"] for x in a.actions()] == ["kill"]
