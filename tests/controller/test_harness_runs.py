"""Fencing by run on the in-process controller: every action names the run it is for, news of a run
the controller has ended changes nothing but that run, and a run declared lost is never fetched
again (xce/controller/hosts/runs.py)."""

from __future__ import annotations

import pytest

from xce.controller.hosts import fleet
from xce.controller.web.models import LoadReport, RegisterRequest
from xce.protocol.actions import KillJob, StartJob
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=2)
        yield harness


def _start_of(h: ControllerHarness, jobid: int) -> StartJob:
    return [a for _, a in h.actions if isinstance(a, StartJob) and a.jobid == jobid][-1]


def test_news_of_a_run_that_ended_touches_neither_the_job_nor_its_new_run(h):
    """``host down --requeue`` of a host whose worker still runs the job; the job comes back to the
    same host. What the worker says of the old run (its usage, its end) is answered for that run."""
    jobid = h.submit(rerunnable=True)
    h.dispatch(jobid, ("h1", 1))
    old = _start_of(h, jobid).run
    h.report("h1", jobid, "started", run=old, pid=10)
    fleet.declare_down(h.ctl, "h1", True, "root")
    assert h.job(jobid)["state"] == "PEND"
    h.host("h1")  # it reports again
    h.dispatch(jobid, ("h1", 1))
    new = _start_of(h, jobid).run
    assert new != old and new == h.ctl.job(jobid)["start_time"]
    sent = len(h.actions)
    for status in ("usage", "started"):
        res = h.report("h1", jobid, status, run=old, usage={"cpu_time": 5})
        assert res["action"] == "kill" and res["stale"] and h.job(jobid)["state"] == "RUN"
    kills = [a for _, a in h.actions[sent:] if isinstance(a, KillJob)]
    assert kills and all(k.run == old for k in kills)  # the worker's new run is not touched
    h.report("h1", jobid, "finished", run=old, exit_code=None, signal="SIGKILL")
    assert h.job(jobid)["state"] == "RUN" and h.job(jobid)["usage"] == {}  # the old run's end is not the job's
    h.report("h1", jobid, "started", run=new, pid=11)
    h.report("h1", jobid, "finished", run=new, exit_code=0)
    assert h.job(jobid)["state"] == "DONE"


def test_a_worker_that_names_no_run_is_taken_as_before(h):
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    h.report("h1", jobid, "started", pid=10)
    h.report("h1", jobid, "finished", exit_code=0)
    assert h.job(jobid)["state"] == "DONE"


def test_a_run_declared_lost_at_registration_is_never_fetched_again(h):
    """A worker SIGKILLed after it fetched a start registers again without the job: the run is lost,
    and its start goes in the same transaction, so the restarted worker, which fetches its actions
    from the beginning, never starts it."""
    h.silence("h1")  # the worker's own polls, below: it fetches the start and dies before acknowledging it
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    fetched = fleet.fetch_actions(h.ctl, "h1", 0, 1000)["actions"]
    assert [a["kind"] for a in fetched if a["jobid"] == jobid] == ["start"]
    fleet.register(h.ctl, RegisterRequest(name="h1", resources={"slots": 2}, running=[], runs={}))
    assert h.job(jobid)["state"] == "EXIT" and h.job(jobid)["reason"] == "lost: worker h1 restarted without it"
    again = fleet.fetch_actions(h.ctl, "h1", 0, 1000)["actions"]  # a restarted worker fetches from the start
    assert [a["kind"] for a in again if a["jobid"] == jobid] == []


def test_a_worker_back_from_silence_keeps_the_runs_it_holds_even_those_still_starting(h):
    """A run the worker holds (its start under way, no usage yet) is not declared lost when the worker
    comes back: the decision to call it lost and the start of its command cannot both happen."""
    starting, gone = h.submit(), h.submit()
    h.dispatch(starting, ("h1", 1))
    h.dispatch(gone, ("h1", 1))
    run = _start_of(h, starting).run
    h.tick()  # its next poll acknowledges both starts: it carried them out
    h.lost("h1")
    assert h.job(starting)["state"] == "UNKWN" and h.job(gone)["state"] == "UNKWN"
    fleet.report_load(h.ctl, "h1", LoadReport(load={"r1m": 0.5}, runs={str(starting): run}))
    assert h.job(starting)["state"] == "RUN"
    assert h.job(gone)["state"] == "EXIT" and h.job(gone)["reason"].startswith("lost: ended while worker h1")


def test_a_worker_back_from_silence_carrying_out_a_start_it_fetched_does_not_have_it_declared_lost(h):
    """The worker fetched a start, fell silent before it carried it out (SIGSTOP), and reports again
    before it does: the report cannot know of the run, so the run is not lost; its start tells."""
    h.silence("h1")  # its own polls, below
    jobid = h.submit()
    h.dispatch(jobid, ("h1", 1))
    fetched = fleet.fetch_actions(h.ctl, "h1", 0, 1000)
    h.lost("h1")
    assert h.job(jobid)["state"] == "UNKWN"
    fleet.report_load(h.ctl, "h1", LoadReport(load={"r1m": 0.5}))
    assert h.job(jobid)["state"] == "UNKWN"
    run = fetched["actions"][-1]["job"]["run"]
    h.report("h1", jobid, "started", run=run, pid=10)
    assert h.job(jobid)["state"] == "RUN"
    fleet.fetch_actions(h.ctl, "h1", fetched["last_id"], 1000)  # carried out: acknowledged
    h.report("h1", jobid, "finished", run=run, exit_code=0)
    assert h.job(jobid)["state"] == "DONE"
