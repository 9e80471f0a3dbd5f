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


def test_a_name_several_jobs_carry_waits_for_all_of_them_as_lsf_does(h):
    # LSF bsub -w: "more than one of your jobs has the same name, all of your jobs that have that name
    # must satisfy the test"
    a = h.submit(name="prep", command=["true"])
    b = h.submit(name="prep", command=["true"])
    h.submit(user="bob", name="prep", command=["true"])  # another user's job of that name is not named
    after = h.submit(depend="ended(prep)", command=["true"])
    assert h.ctl.job(after)["depend"] == f"ended({a}) && ended({b})"
    mark = len(h.feed)
    run(h, a, 1)
    h.tick()
    assert after not in pushed(h.feed[mark:])
    assert h.job(after)["pend_reasons"][0]["text"] == f"waiting for ended({b}) (ended({a}) && ended({b}))"
    run(h, b, 0)
    h.tick()
    assert after in pushed(h.feed[mark:])
    # done(): one of them ended EXIT, so it can never be met
    never = h.submit(depend="done(prep)", command=["true"])
    h.tick()
    assert h.job(never)["pend_reasons"][0]["text"].startswith(f"dependency can never be met: done({a}): job {a} ended EXIT")


def test_job_dep_last_sub_makes_a_shared_name_mean_the_job_submitted_last(tmp_path):
    from xce.testing.controller_harness import CONFIG

    with ControllerHarness(tmp_path, config="job_dep_last_sub = true\n" + CONFIG) as h:
        h.host("h1", slots=4)
        h.submit(name="prep", command=["true"])
        b = h.submit(name="prep", command=["true"])
        after = h.submit(depend="done(prep)", command=["true"])
        assert h.ctl.job(after)["depend"] == f"done({b})"
        mark = len(h.feed)
        run(h, b, 0)
        h.tick()
        assert after in pushed(h.feed[mark:])


def test_a_trailing_star_names_every_job_whose_name_begins_so(h):
    a = h.submit(name="stage_a", command=["true"])
    b = h.submit(name="stage.b (v2)", command=["true"])
    h.submit(name="other", command=["true"])
    after = h.submit(depend="done(stage*)", command=["true"])
    assert h.ctl.job(after)["depend"] == f"done({a}) && done({b})"
    with pytest.raises(FieldErrors) as err:
        h.submit(depend="done(nosuch*)")
    assert err.value.errors[0]["msg"] == ("dependency 'done(nosuch*)' column 6: no job of yours has a name "
                                          "beginning 'nosuch'")
    # a name with _ or % in it is matched as written, not as a LIKE pattern
    with pytest.raises(FieldErrors):
        h.submit(depend="done(stage%*)")


def test_star_indexes_make_each_element_wait_for_the_same_element_of_another_array(h):
    # LSF: bsub -w "done(myarrayA[*])" -J "myArrayB[1-10]": element 1 of B waits for element 1 of A ...
    first = h.submit(name="sweepA", array="1-3", command=["true"])
    b_first = h.submit(name="sweepB", array="1-3", depend="done(sweepA[*])", command=["true"])
    assert h.ctl.job(b_first)["depend"] == f"done({first}[*])"
    h.tick()
    assert h.job(b_first + 1)["pend_reasons"][0]["text"] == f"waiting for done({first}[2]) (done({first}[*]))"
    mark = len(h.feed)
    run(h, first + 1, 0)  # element 2 of A
    h.tick()
    assert pushed(h.feed[mark:]) == [b_first + 1]
    run(h, first + 2, 5)  # element 3 of A fails: element 3 of B can never run
    h.tick()
    assert h.job(b_first + 2)["pend_reasons"][0]["text"].startswith("dependency can never be met")
    # another of the user's fields changed on an element keeps its dependency
    h.modify(b_first, name="sweepB2")
    assert h.ctl.job(b_first)["depend"] == f"done({first}[*])"
    # arrays of other indexes, or a single job, cannot be paired
    for fields in ({"array": "1-4"}, {}):
        with pytest.raises(FieldErrors) as err:
            h.submit(depend=f"done({first}[*])", **fields)
        assert f"job {first}[*] pairs arrays of the same indexes: its are 1-3" in err.value.errors[0]["msg"]


def test_slurm_singleton_waits_for_the_users_unfinished_jobs_of_the_same_name(h):
    # Slurm: "can begin execution after any previously launched jobs sharing the same job name and
    # user have terminated"
    from xce.jobref import from_slurm

    first = h.submit(name="nightly", depend=from_slurm("singleton"), command=["true"])
    assert h.ctl.job(first)["depend"] is None  # nothing of that name before it: it may run at once
    second = h.submit(name="nightly", depend=from_slurm("singleton"), command=["true"])
    h.submit(user="bob", name="nightly", command=["true"])  # another user's job of that name does not count
    third = h.submit(name="nightly", depend=from_slurm("afterany:" + str(first) + ",singleton"), command=["true"])
    assert h.ctl.job(second)["depend"] == f"ended({first})"
    assert h.ctl.job(third)["depend"] == f"ended({first}) && ended({first}) && ended({second})"
    mark = len(h.feed)
    run(h, first, 0)
    h.tick()
    assert pushed(h.feed[mark:]) == [second]
    with pytest.raises(FieldErrors) as err:
        h.submit(depend="singleton()")
    assert "give this job a name (--job-name)" in err.value.errors[0]["msg"]
