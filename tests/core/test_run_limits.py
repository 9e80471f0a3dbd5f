"""The core knows every running job's run limit and start time, and keeps them across a snapshot."""

import io

from xce.core import SchedulerCore
from xce.core.specs import JobSpec
from xce.testing import Harness, make_host, make_job


def test_a_running_job_carries_its_limit_and_start_time():
    h = Harness()
    h.hosts(make_host("h1").slots(2))
    h.submit(make_job(1).limit(600), make_job(2))
    decisions = h.round_decisions()
    assert [d.jobid for d in decisions] == [1, 2]
    one, two = h.core.jobs[1], h.core.jobs[2]
    assert (one.run_limit, one.start_time) == (600, decisions[0].ts)
    assert (two.run_limit, two.start_time) == (0, decisions[1].ts)

    saved = io.StringIO()
    h.core.save_snapshot(saved)
    again = SchedulerCore(lambda d: None)
    again.load_snapshot(io.StringIO(saved.getvalue()))
    assert (again.jobs[1].run_limit, again.jobs[1].start_time) == (600, decisions[0].ts)
    assert again.jobs[2].run_limit == 0


def test_a_job_without_a_limit_reads_as_before_run_limits_existed():
    assert "run_limit" not in JobSpec(jobid=1, user="u", queue="q").to_json()
    spec = JobSpec(jobid=1, user="u", queue="q", run_limit=90)
    assert JobSpec.from_json(spec.to_json()) == spec
