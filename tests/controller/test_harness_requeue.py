"""Requeue rules (a person's ``xce requeue``, a worker's refusal, a host that falls silent) on the
in-process controller: what tests/controller/test_controller_requeue_modify.py,
test_controller_protocol.py and test_controller_liveness.py check over HTTP, in milliseconds."""

from __future__ import annotations

import pytest

from xce.core import events as ev
from xce.protocol.actions import KillJob
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=2)
        yield harness


def running(h: ControllerHarness, host: str = "h1") -> int:
    jobid = h.submit()
    h.dispatch(jobid, (host, 1))
    h.report(host, jobid, "started", pid=jobid)
    return jobid


def test_a_requeued_running_job_keeps_its_slots_until_its_processes_end_then_pends(h):
    # mirrors test_controller_requeue_modify.py::
    #   test_a_requeued_running_job_keeps_its_slots_until_its_processes_end_then_pends
    jobid = running(h)
    mark, sent = len(h.feed), len(h.actions)
    (res,) = h.act("requeue", jobid)
    assert res["ok"] and res["message"] == (f"Job <{jobid}> is being requeued (it goes back to PEND when its "
                                            f"processes have ended).")
    ((_, kill),) = h.actions[sent:]
    assert isinstance(kill, KillJob) and kill.reason == "requeued by alice"
    assert h.job(jobid)["state"] == "RUN" and h.feed[mark:] == []
    (again,) = h.act("requeue", jobid)
    assert not again["ok"] and "already being requeued (by alice)" in again["message"]
    h.report("h1", jobid, "finished", exit_code=None, signal="SIGTERM", reason="requeued by alice")
    job = h.job(jobid)
    assert (job["state"], job["reason"], job["placement"]) == ("PEND", "requeued by alice", [])
    assert h.moves(mark) == [(jobid, "PEND")]
    h.dispatch(jobid, ("h1", 1))  # its next run is an ordinary one
    h.report("h1", jobid, "started", pid=2)
    h.report("h1", jobid, "finished", exit_code=0)
    assert h.job(jobid)["state"] == "DONE"


def test_a_requeued_job_that_fails_first_still_pends_and_a_kill_wins_over_a_requeue(h):
    # mirrors test_controller_requeue_modify.py::
    #   test_a_requeued_job_that_fails_first_still_pends_and_a_kill_wins_over_a_requeue
    first, second = running(h), running(h)
    assert all(r["ok"] for r in h.act("requeue", first, second))
    h.report("h1", first, "finished", exit_code=3)
    job = h.job(first)
    assert (job["state"], job["reason"]) == ("PEND", "requeued by alice (its run ended first: exit code 3)")
    assert h.act("kill", second)[0]["ok"]
    h.report("h1", second, "finished", exit_code=None, signal="SIGTERM")
    assert (h.job(second)["state"], h.job(second)["reason"]) == ("EXIT", "killed by alice")


def test_a_finished_job_requeued_is_pushed_to_the_scheduler_again(h):
    # mirrors test_e2e_workflow.py::test_requeue_runs_a_done_job_again_with_its_history
    jobid = running(h)
    h.report("h1", jobid, "finished", exit_code=0)
    mark = len(h.feed)
    assert h.act("requeue", jobid)[0]["message"] == f"Job <{jobid}> is requeued."
    assert [type(e).__name__ for e in h.feed[mark:]] == ["JobStateChange", "JobsPush"]
    assert h.moves(mark) == [(jobid, "PEND")]


def test_a_worker_that_refuses_a_job_sends_it_back_to_pend(h):
    # mirrors test_controller_protocol.py::test_worker_rejection_requeues
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    mark = len(h.feed)
    assert h.report("h1", jobid, "rejected", reason="draining")["state"] == "PEND"
    job = h.job(jobid)
    assert job["placement"] == [] and "refused it (draining)" in job["reason"]
    assert h.moves(mark) == [(jobid, "PEND")]


def test_a_silent_host_leaves_its_running_job_unknown_and_requeues_the_one_it_never_took(h):
    # mirrors test_controller_liveness.py::test_silent_worker_is_given_up_and_comes_back
    h.host("h2", slots=2)
    delivered = running(h, "h2")
    h.silence("h2")
    undelivered = h.submit()
    h.dispatch(undelivered, ("h2", 1))
    mark = len(h.feed)
    assert h.lost("h2") == ["h2"]
    unknown = h.job(delivered)
    assert unknown["state"] == "UNKWN" and [p["host"] for p in unknown["placement"]] == ["h2"]
    requeued = h.job(undelivered)
    assert requeued["state"] == "PEND" and "stopped reporting before it took the job" in requeued["reason"]
    assert set(h.moves(mark)) == {(delivered, "UNKWN"), (undelivered, "PEND")}
    (push,) = [e for e in h.feed[mark:] if isinstance(e, ev.WorkersPush)]
    assert [(w.name, w.status) for w in push.hosts] == [("h2", "unreach")]
    res = h.dispatch(undelivered, ("h2", 1))
    assert res["status"] == "rejected" and "host h2 is unreach" in res["reason"]
