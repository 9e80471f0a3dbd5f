"""The scheduler's decisions applied to the authoritative state, on the in-process controller: the
rules of tests/controller/test_controller_protocol.py, each in milliseconds."""

from __future__ import annotations

import pytest

from xce.core import decisions as d
from xce.protocol.actions import KillJob, ResumeJob, StartJob, SuspendJob
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=4)
        yield harness


def test_a_dispatch_runs_the_job_and_sends_its_host_the_start(h):
    # mirrors test_controller_protocol.py::test_dispatch_run_usage_finish
    jobid = h.submit(tasks=2, env={"X": "1"}, limits={"mem": 1 << 30}, stdout="/tmp/o.%J")
    mark = len(h.feed)
    assert h.dispatch(jobid, ("h1", 2))["status"] == "applied"
    job = h.job(jobid)
    assert job["state"] == "RUN" and job["placement"] == [{"host": "h1", "tasks": 2}] and job["start_time"]
    assert h.moves(mark) == [(jobid, "RUN")]
    ((host, start),) = h.actions
    assert host == "h1" and isinstance(start, StartJob) and start.jobid == jobid
    assert (start.command, start.env, start.limits, start.stdout, start.user) == (
        ["sleep", "100"], {"X": "1"}, {"mem": 1 << 30}, f"/tmp/o.{jobid}", "alice")
    h.report("h1", jobid, "started", pid=4242)
    h.report("h1", jobid, "finished", exit_code=0)
    assert h.job(jobid)["state"] == "DONE"
    assert h.moves(mark) == [(jobid, "RUN"), (jobid, "DONE")]


def test_a_failing_command_ends_exit_with_its_code(h):
    # mirrors test_controller_protocol.py::test_failure_exit_code_gives_exit
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    h.report("h1", jobid, "started", pid=1)
    h.report("h1", jobid, "finished", exit_code=3)
    job = h.job(jobid)
    assert (job["state"], job["exit_code"]) == ("EXIT", 3)


def test_a_rejected_dispatch_tells_the_scheduler_the_real_state(h):
    # mirrors test_controller_protocol.py::test_rejected_dispatch_tells_the_scheduler_the_real_state
    killed, waiting = h.submit(), h.submit()
    h.act("kill", killed)
    mark = len(h.feed)
    res = h.decide(*(d.Dispatch(ts=1, seq=i, jobid=j, placement=((host, 1),))
                     for i, (j, host) in enumerate([(killed, "h1"), (waiting, "nosuchhost"), (999999, "h1")])))
    assert [r["status"] for r in res] == ["rejected"] * 3
    assert "it is EXIT" in res[0]["reason"] and "host nosuchhost is not registered" in res[1]["reason"]
    assert h.moves(mark) == [(killed, "EXIT"), (waiting, "PEND")]
    assert h.job(waiting)["state"] == "PEND" and h.actions == []


def test_pend_reasons_are_stored_only_when_they_change_and_are_no_event(h):
    # mirrors test_controller_protocol.py::test_pend_reasons_are_stored_only_when_they_change
    jobid = h.submit(tasks=4)
    mark = len(h.feed)
    assert h.pend(jobid, "alloc", "needs slots 64")["status"] == "applied"
    assert h.pend(jobid, "alloc", "needs slots 64")["status"] == "unchanged"
    assert h.feed[mark:] == []
    assert h.job(jobid)["pend_reasons"] == [{"step": "alloc", "text": "needs slots 64", "resource": "", "needed": 0,
                                             "short": 0}]


def test_a_preemption_suspends_its_victims_at_once_and_a_resume_brings_them_back(h):
    # mirrors test_controller_protocol.py::test_preempt_suspends_victims_and_resume_brings_them_back
    victim = h.submit()
    urgent = h.submit(queue="high")
    h.dispatch(victim, ("h1", 1))
    mark, sent = len(h.feed), len(h.actions)
    (res,) = h.decide(d.Preempt(ts=1, seq=3, preempting_jobid=urgent, victim_jobids=(victim, urgent),
                                signal="SIGTSTP"))
    assert res["status"] == "partial" and res["suspended"] == [victim] and res["rejected"][0]["jobid"] == urgent
    assert (h.job(victim)["state"], h.job(victim)["reason"]) == ("SSUSP", f"preempted by job {urgent}")
    run = h.ctl.job(victim)["start_time"]  # the run it is for: a later run of the job is not suspended by it
    assert h.actions[sent:] == [("h1", SuspendJob(jobid=victim, run=run, signal="SIGTSTP",
                                                  reason=f"preempted by job {urgent}"))]
    assert h.moves(mark) == [(victim, "SSUSP"), (urgent, "PEND")]
    (res,) = h.decide(d.Resume(ts=2, seq=4, jobid=victim))
    assert res["status"] == "applied" and h.job(victim)["state"] == "RUN"
    (host, resume), = h.actions[sent + 1:]
    assert isinstance(resume, ResumeJob) and resume.signal == "SIGCONT"
    assert h.decide(d.Resume(ts=3, seq=5, jobid=victim))[0]["status"] == "rejected"


def test_killing_a_running_job_sends_its_host_a_kill(h):
    # mirrors test_controller_protocol.py::test_user_suspend_resume_and_kill_reach_the_worker
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    (res,) = h.act("kill", jobid)
    assert res["ok"] and h.job(jobid)["state"] == "EXIT"
    (_, kill) = h.actions[-1]
    assert isinstance(kill, KillJob) and (kill.signal, kill.reason) == ("SIGTERM", "killed by alice")
