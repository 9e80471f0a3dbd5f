"""What the scheduler is shown of jobs the controller holds back (held, array limit, begin time), on the
in-process controller: the rules of tests/controller/test_controller_gates.py, without a process."""

from __future__ import annotations

import time

import pytest

from xce.core import events as ev
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=8)
        yield harness


def pushed(events: list[ev.Event]) -> list[int]:
    return [j.jobid for e in events if isinstance(e, ev.JobsPush) for j in e.jobs]


def test_a_held_job_is_kept_from_the_scheduler_and_pushed_when_released(h):
    # mirrors test_controller_gates.py::test_a_held_job_is_kept_from_the_scheduler_and_pushed_when_released
    mark = len(h.feed)
    held = h.submit(hold=True)
    assert h.feed[mark:] == []
    assert h.job(held)["pend_reasons"][0]["step"] == "held"
    (res,) = h.act("release", held)
    assert res["ok"], res
    assert pushed(h.feed[mark:]) == [held]


def test_holding_a_job_the_scheduler_knows_withdraws_it_and_refuses_its_dispatch(h):
    # mirrors test_controller_gates.py::test_holding_a_job_the_scheduler_knows_withdraws_it_and_refuses_its_dispatch
    jobid = h.submit()
    mark = len(h.feed)
    (res,) = h.act("hold", jobid)
    assert res["message"] == f"Job <{jobid}> is held."
    (gone,) = h.feed[mark:]
    assert isinstance(gone, ev.JobStateChange) and gone.state == "EXIT"
    assert gone.reason.startswith("withdrawn: held by alice")
    assert h.dispatch(jobid, ("h1", 1))["status"] == "rejected"
    assert h.job(jobid)["state"] == "PEND" and h.actions == []
    h.pend(jobid, "slots", "busy")
    assert h.job(jobid)["pend_reasons"][0]["step"] == "held"  # the controller's reason stands


def test_an_array_limit_releases_elements_as_others_end(h):
    # mirrors test_controller_gates.py::test_an_array_limit_releases_elements_as_others_end
    mark = len(h.feed)
    first = h.submit(array="1-5%2", command=["true"])
    assert pushed(h.feed[mark:]) == [first, first + 1]
    assert h.job(first + 2)["pend_reasons"] == [{"step": "limit", "text": f"array {first} runs at most 2 elements "
                                                 f"at once (%2)"}]
    h.dispatch(first, ("h1", 1))
    h.report("h1", first, "started", pid=1)
    mark = len(h.feed)
    h.report("h1", first, "finished", exit_code=0)
    assert pushed(h.feed[mark:]) == []  # the next element is let in by the leader's next look
    h.tick()
    assert pushed(h.feed[mark:]) == [first + 2]


def test_a_job_with_a_begin_time_waits_for_it_and_is_pushed_when_it_is_moved_earlier(h):
    # mirrors test_controller_requeue_modify.py's modify of a pending job (begin time, -b)
    mark = len(h.feed)
    later = time.time_ns() + 3600 * 10**9
    jobid = h.submit(begin_time=later)
    assert pushed(h.feed[mark:]) == []
    assert h.job(jobid)["pend_reasons"][0]["step"] == "begin"
    h.tick()
    assert pushed(h.feed[mark:]) == []
    h.modify(jobid, begin_time=time.time_ns() - 10**9)
    assert pushed(h.feed[mark:]) == [jobid]
