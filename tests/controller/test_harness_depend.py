"""Dependencies (``-w``, ``--dependency``) on the in-process controller: the rules the pipeline test of
tests/e2e/test_e2e_workflow.py checks with real processes, each in milliseconds."""

from __future__ import annotations

import pytest

from xce.controller.errors import FieldErrors
from xce.core import events as ev
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=4)
        yield harness


def pushed(events: list[ev.Event]) -> list[int]:
    return [j.jobid for e in events if isinstance(e, ev.JobsPush) for j in e.jobs]


def run(h: ControllerHarness, jobid: int, exit_code: int) -> None:
    h.dispatch(jobid, ("h1", 1))
    h.report("h1", jobid, "started", pid=jobid)
    h.report("h1", jobid, "finished", exit_code=exit_code)


def test_a_dependent_job_reaches_the_scheduler_only_once_its_dependency_is_met(h):
    # mirrors test_e2e_workflow.py::test_a_three_job_pipeline_runs_in_order_and_a_failed_step_stops_it (its first half)
    a = h.submit(name="pipe_a", command=["true"])
    b = h.submit(depend="done(pipe_a)", command=["true"])
    c = h.submit(depend=f"done({b})", command=["true"])
    # names are resolved to ids when it is submitted
    assert h.job(b)["pend_reasons"] == [{"step": "depend", "text": f"waiting for done({a}) (done({a}))"}]
    mark = len(h.feed)
    run(h, a, 0)
    h.tick()
    assert pushed(h.feed[mark:]) == [b]
    run(h, b, 0)
    h.tick()
    assert pushed(h.feed[mark:]) == [b, c]


def test_a_dependency_that_can_never_be_met_says_so_and_kill_orphans_removes_the_job(h):
    # mirrors test_e2e_workflow.py::test_a_three_job_pipeline_runs_in_order_and_a_failed_step_stops_it (its second half)
    bad = h.submit(name="pipe_bad", command=["false"])
    after = h.submit(depend="done(pipe_bad)", command=["true"])
    run(h, bad, 3)
    h.tick()
    job = h.job(after)
    assert job["state"] == "PEND"
    assert job["pend_reasons"] == [{"step": "depend", "text": f"dependency can never be met: done({bad}): job {bad} "
                                    f"ended EXIT (`xce kill --orphans` removes such jobs)"}]
    assert [r["message"] for r in h.act("kill", orphans=True)] == [f"Job <{after}> is killed."]
    assert h.job(after)["state"] == "EXIT"


def test_a_dependency_on_a_job_that_does_not_exist_is_refused_with_its_column(h):
    # mirrors test_controller_api.py::test_field_errors_name_the_field_and_the_expectation (the depend field)
    with pytest.raises(FieldErrors) as err:
        h.submit(depend="done(999)")
    (e,) = err.value.errors
    assert e["loc"] == ["body", "depend"] and e["ctx"] == {"column": 6}
    assert e["msg"] == "dependency 'done(999)' column 6: job 999 does not exist"
