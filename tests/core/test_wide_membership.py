"""Which jobs each host lists (``Host.jobs``) while wide jobs come and go: the cluster records a job
once for all its hosts, and every host reads the same as if it were written on each."""

import io

import pytest

from xce.core import SchedulerCore
from xce.testing import Harness, make_host, make_job


def _listed(core) -> dict[str, dict[int, int]]:
    return {h.name: dict(h.jobs) for h in core.cluster.hosts if h.jobs}


def _expected(core) -> dict[str, dict[int, int]]:
    """host -> jobid -> tasks from the placements of the jobs that hold something."""
    out: dict[str, dict[int, int]] = {}
    for job in core.jobs.values():
        for name, tasks in job.placement:
            out.setdefault(name, {})[job.jobid] = tasks
    return out


def test_hosts_list_a_wide_job_while_it_runs_and_not_after():
    h = Harness()
    h.hosts(*(make_host(f"h{i:03d}").slots(2) for i in range(40)))
    h.submit(make_job(1).tasks(50), make_job(2).tasks(3), make_job(3).tasks(20))
    h.round()
    h.core.validate()
    assert _listed(h.core) == _expected(h.core) and any(1 in jobs for jobs in _listed(h.core).values())
    h.state(1, "DONE")
    h.core.validate()
    assert all(1 not in host.jobs for host in h.core.cluster.hosts)
    assert _listed(h.core) == _expected(h.core)
    h.round()
    h.core.validate()
    assert _listed(h.core) == _expected(h.core)


def test_host_lists_follow_hosts_added_in_front():
    h = Harness()
    h.hosts(*(make_host(f"h{i:03d}").slots(1) for i in range(20, 60)))
    h.submit(make_job(1).tasks(30), make_job(2).tasks(4))
    h.round()
    before = _listed(h.core)
    h.hosts(*(make_host(f"h{i:03d}").slots(1) for i in range(20)))  # every index moves
    h.core.validate()
    assert _listed(h.core) == before == _expected(h.core)
    h.state(1, "DONE")
    h.core.validate()
    assert _listed(h.core) == _expected(h.core) and all(1 not in host.jobs for host in h.core.cluster.hosts)


def test_a_loaded_snapshot_lists_the_same_jobs_on_each_host():
    h = Harness()
    h.hosts(*(make_host(f"h{i:03d}").slots(2) for i in range(30)))
    h.submit(make_job(1).tasks(40), make_job(2).tasks(5))
    h.round()
    buf = io.StringIO()
    h.core.save_snapshot(buf)
    buf.seek(0)
    fresh = SchedulerCore(lambda d: None)
    fresh.load_snapshot(buf)
    fresh.validate()
    assert _listed(fresh) == _listed(h.core) == _expected(h.core)


def test_host_jobs_is_read_only():
    h = Harness()
    h.hosts(make_host("h1").slots(1))
    with pytest.raises(TypeError):
        h.core.cluster.hosts[0].jobs[1] = 1  # type: ignore[index]
