"""``xce requeue`` of a running job and ``xce modify`` of run limits, requests and limits, over the
real feed, decision and worker protocol (the test plays the scheduler and the worker)."""

from __future__ import annotations

import time

import pytest
from controller_harness import CONFIG, Api, write_config
from test_controller_protocol import Cluster, dispatch

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    sd = tmp_path_factory.mktemp("state")
    config = CONFIG + "\n[queues.short]\nrun_limit = 10\nmax_run_limit = 30\n"
    ctl = start_controller(sd, config=str(write_config(sd, config)), extra_args=("--worker-timeout", "600"))
    a = Api(ctl)
    yield a
    a.close()
    ctl.stop()


def _running(cl: Cluster, **body) -> int:
    jobid = cl.submit(**body)
    cl.decide(dispatch(jobid, (cl.host, 1)))
    cl.report(jobid, status="started", pid=4242)
    cl.actions()
    cl.events()
    return jobid


def _requeue(cl: Cluster, jobid: int) -> dict:
    r = cl.user.post("/v1/jobs/act", json={"action": "requeue", "jobs": [str(jobid)]})
    assert r.status_code == 200, r.text
    (res,) = r.json()["results"]
    return res


def test_a_requeued_running_job_keeps_its_slots_until_its_processes_end_then_pends(api):
    cl = Cluster(api, "rq1", slots=1)
    jobid = _running(cl)
    res = _requeue(cl, jobid)
    assert res["ok"] and res["message"] == (f"Job <{jobid}> is being requeued (it goes back to PEND when its "
                                            f"processes have ended).")
    (kill,) = cl.actions()
    assert kill["kind"] == "kill" and kill["reason"] == "requeued by user-rq1"
    job = cl.job(jobid)
    assert job["state"] == "RUN" and job["placement"]  # its slot is not handed to anyone while it may still run
    assert cl.events() == []
    again = _requeue(cl, jobid)
    assert not again["ok"] and "already being requeued (by user-rq1)" in again["message"]

    cl.report(jobid, status="finished", exit_code=None, signal="SIGTERM", reason="requeued by user-rq1")
    job = cl.job(jobid)
    assert (job["state"], job["reason"], bool(job["placement"]), job["exit_code"]) == ("PEND", "requeued by user-rq1",
                                                                                 False, None)
    moves = [(h["from"], h["to"], h["reason"]) for h in job["history"]]
    assert moves[-2:] == [("RUN", "RUN", "requeued by user-rq1: its processes are being stopped"),
                          ("RUN", "PEND", "requeued by user-rq1")]
    (change,) = cl.events()
    assert (change["type"], change["payload"]["state"]) == ("JOB_STATE_CHANGE", "PEND")
    # Its next run is an ordinary one: it ends DONE, not requeued again.
    cl.decide(dispatch(jobid, (cl.host, 1)))
    cl.report(jobid, status="started", pid=4243)
    cl.report(jobid, status="finished", exit_code=0)
    assert cl.job(jobid)["state"] == "DONE"


def test_a_requeued_job_that_fails_first_still_pends_and_a_kill_wins_over_a_requeue(api):
    cl = Cluster(api, "rq2", slots=2)
    first, second = _running(cl), _running(cl)
    assert _requeue(cl, first)["ok"] and _requeue(cl, second)["ok"]
    cl.report(first, status="finished", exit_code=3)  # it ended by itself before the stop reached it
    job = cl.job(first)
    assert (job["state"], job["reason"]) == ("PEND", "requeued by user-rq2 (its run ended first: exit code 3)")
    r = cl.user.post("/v1/jobs/act", json={"action": "kill", "jobs": [str(second)]})
    assert r.json()["results"][0]["ok"], r.text
    cl.report(second, status="finished", exit_code=None, signal="SIGTERM")
    job = cl.job(second)
    assert (job["state"], job["reason"]) == ("EXIT", "killed by user-rq2")
    # Run again later, it is an ordinary job: the requeue asked of its killed run is forgotten.
    assert _requeue(cl, second)["ok"] and cl.job(second)["state"] == "PEND"
    cl.decide(dispatch(second, (cl.host, 1)))
    cl.report(second, status="started", pid=4244)
    cl.report(second, status="finished", exit_code=0)
    assert cl.job(second)["state"] == "DONE"


def test_requeue_refuses_a_pending_or_unknown_job_and_anothers_job(api):
    cl = Cluster(api, "rq3", slots=1)
    pending = cl.submit(hold=True)
    res = _requeue(cl, pending)
    assert not res["ok"] and res["message"] == (f"cannot requeue job {pending}: it is PEND (only a running, "
                                                f"suspended or finished job can be requeued)")
    other = Cluster(api, "rq3b", slots=1)
    theirs = _running(other)
    res = _requeue(cl, theirs)
    assert not res["ok"] and res["status"] == 403 and cl.job(theirs)["state"] == "RUN"
    assert other.actions() == []  # nothing was sent to the other user's job


def test_modify_changes_a_running_jobs_run_limit_within_its_queues_maximum(api):
    cl = Cluster(api, "rq4", slots=1)
    jobid = _running(cl, queue="short")
    assert cl.job(jobid)["run_limit"] == 600  # the queue's default
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"run_limit": 1200})
    assert r.status_code == 200, r.text
    (action,) = cl.actions()
    assert (action["kind"], action["jobid"], action["run_limit"]) == ("run_limit", jobid, 1200)
    (update,) = cl.events()
    assert update["type"] == "JOB_UPDATE" and update["payload"]["run_limit"] == 1200
    job = cl.job(jobid)
    assert job["run_limit"] == 1200 and job["history"][-1]["reason"] == "modified: run limit 0:10:00 -> 0:20:00"
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"run_limit": 31 * 60})
    assert r.status_code == 422 and "longer than queue 'short' allows (max_run_limit = 30 min)" in r.text
    assert cl.job(jobid)["run_limit"] == 1200 and cl.actions() == []
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"run_limit": 0, "tasks": 2})
    assert r.status_code == 409 and "only a pending job's tasks can be changed" in r.text
    assert cl.job(jobid)["run_limit"] == 1200 and cl.actions() == []  # nothing of a refused change applied
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"run_limit": 0})  # back to the queue's default
    assert r.status_code == 200 and cl.job(jobid)["run_limit"] == 600
    assert [a["run_limit"] for a in cl.actions()] == [600]


def test_modify_merges_requests_and_limits_of_a_pending_job_checked_as_at_submission(api):
    cl = Cluster(api, "rq5", slots=4)
    jobid = cl.submit(hold=True, requests={"mem": "1G"}, limits={"mem": "2G", "xce.io/cpu-milli": 500})
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"requests": {"mem": "4G"}, "limits": {"xce.io/cpu-milli": 0},
                                                  "run_limit": 300})
    assert r.status_code == 200, r.text
    job = cl.job(jobid)
    assert job["requests"] == {"mem": 4 << 30} and job["limits"] == {"mem": 2 << 30}
    assert job["sched_request"] == "rusage[mem=4G]" and job["run_limit"] == 300
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"requests": {"mem": "100T"}})
    assert r.status_code == 422 and "can never run on this cluster" in r.text
    r = cl.user.patch(f"/v1/jobs/{jobid}", json={"limits": {"r1m": 2}})
    assert r.status_code == 422 and "host attribute or load index" in r.text, r.text
    assert cl.job(jobid)["requests"] == {"mem": 4 << 30}  # a refused change changed nothing
    running = _running(cl)
    r = cl.user.patch(f"/v1/jobs/{running}", json={"requests": {"mem": "1G"}})
    assert r.status_code == 409 and "only a pending job's requests can be changed" in r.text


def test_recently_ended_jobs_are_those_that_ended_within_the_window(api):
    cl = Cluster(api, "rq6", slots=1)
    jobid = cl.submit(hold=True)
    assert cl.user.post("/v1/jobs/act", json={"action": "kill", "jobs": [str(jobid)]}).json()["results"][0]["ok"]

    def ended(within: int) -> list[int]:
        r = cl.user.get("/v1/jobs", params={"state": "DONE,EXIT", "ended_within": within})
        assert r.status_code == 200, r.text
        return [j["jobid"] for j in r.json()["jobs"]]

    assert ended(3600) == [jobid]
    time.sleep(1.1)
    assert ended(1) == [] and ended(3600) == [jobid]
    r = cl.user.get("/v1/jobs", params={"ended_within": 0})
    assert r.status_code == 422 and "ended_within" in r.text
