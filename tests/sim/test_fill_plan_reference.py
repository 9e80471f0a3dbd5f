"""The FCFS reference on the archive traces still holds with the fill plan (issue 17).

The fill plan is tried only after the specification's plans, so on a trace's own cluster every job
the specification's plans placed starts at the same time on the same hosts. The reference is the
same simulation with the plan iterator cut back to the specification's plans.
"""

from pathlib import Path

import pytest

import xce.core.alloc.allocator as allocator
from xce.core.alloc.plans import spec_plans
from xce.sim import read_swf, simulate, uniform_cluster

TRACES = Path(__file__).resolve().parents[2] / "examples" / "traces"


def _schedule(trace, cluster):
    r = simulate(trace, cluster)
    return [(j, r.start[i], r.end[i], r.placement[i]) for i, j in enumerate(trace.jobid)]


@pytest.mark.slow
@pytest.mark.parametrize("name,hosts,slots", [("NASA-iPSC-1993-3.1-cln.swf", 128, 1),
                                              ("LANL-CM5-1994-4.1-cln.first155.swf", 1024, 1)])
def test_fcfs_reference_matches_job_for_job(monkeypatch, name, hosts, slots):
    trace = read_swf(TRACES / name, skip_malformed=True)
    with_fill = _schedule(trace, uniform_cluster(hosts, slots))
    monkeypatch.setattr(allocator, "plan_iter", spec_plans)
    reference = _schedule(trace, uniform_cluster(hosts, slots))
    assert len(with_fill) == len(trace) > 100
    assert sum(1 for _, s, _, _ in reference if s >= 0) > 100
    for got, want in zip(with_fill, reference):
        assert got == want, f"job {want[0]}: {got} differs from the reference {want}"
