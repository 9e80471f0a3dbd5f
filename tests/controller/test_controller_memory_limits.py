"""Each host's memory limit for a job, worked out once by the controller when it dispatches it:
what the job reserved there (per slot times its slots on that host) where the cluster makes
reservations limits, its explicit limit everywhere, the smaller of the two."""

from __future__ import annotations

import json

import pytest
from test_controller_protocol import Cluster, dispatch

from xce.config.schema import MemorySettings
from xce.controller.hosts.spread import memory_limits

M = 1 << 20
SLURM_DEFAULT, LSF_ENFORCED, BOTH_OFF = (MemorySettings(), MemorySettings(enforce_rusage=True),
                                         MemorySettings(constrain_ram_space=False))


def job(request: str = "", tasks: int = 1, requests: dict | None = None, limits: dict | None = None) -> dict:
    """A job row as the store keeps it (requests and limits as JSON text)."""
    return {"request": request, "tasks": tasks, "requests": json.dumps(requests) if requests else None,
            "limits": json.dumps(limits) if limits else None}


@pytest.mark.integration
def test_each_host_gets_its_own_limit_in_its_start(api):
    a, b = Cluster(api, "mla"), Cluster(api, "mlb")
    # sbatch -n 3 --mem-per-cpu=100M with an explicit --limit mem=250M: 2 slots on mla, 1 on mlb.
    jobid = a.submit(tasks=3, requests={"mem": "100M"}, limits={"mem": "250M"})
    assert a.decide(dispatch(jobid, ("mla", 2), ("mlb", 1)))[0]["status"] == "applied"
    (sa,), (sb,) = a.actions(), b.actions()
    assert (sa["job"]["limits"], sb["job"]["limits"]) == ({"mem": 200 * M}, {"mem": 100 * M})
    # LSF's rusage[mem] stays a reservation by default: no limit anywhere.
    jobid = a.submit(tasks=2, request="rusage[mem=100M]")
    assert a.decide(dispatch(jobid, ("mla", 1), ("mlb", 1)))[0]["status"] == "applied"
    (sa,), (sb,) = a.actions(), b.actions()
    assert sa["job"]["limits"] == sb["job"]["limits"] == {}


def test_a_slurm_reservation_is_each_hosts_limit_by_default():
    j = job(tasks=4, requests={"mem": 200 * M})
    assert memory_limits(j, [("h1", 3), ("h2", 1)], SLURM_DEFAULT) == {"h1": 600 * M, "h2": 200 * M}
    assert memory_limits(j, [("h1", 3), ("h2", 1)], BOTH_OFF) == {}


def test_rusage_is_a_limit_only_where_the_site_enforces_it():
    j = job("rusage[mem=100M]", tasks=2)
    assert memory_limits(j, [("h1", 2)], SLURM_DEFAULT) == {}
    assert memory_limits(j, [("h1", 2)], LSF_ENFORCED) == {"h1": 200 * M}


def test_the_smaller_of_an_explicit_limit_and_the_reservation_applies():
    j = job(tasks=4, requests={"mem": 100 * M}, limits={"mem": 250 * M})
    assert memory_limits(j, [("h1", 3), ("h2", 1)], SLURM_DEFAULT) == {"h1": 250 * M, "h2": 100 * M}
    # An explicit limit holds on every host whatever the switches say.
    assert memory_limits(j, [("h1", 3), ("h2", 1)], BOTH_OFF) == {"h1": 250 * M, "h2": 250 * M}


def test_a_compound_is_held_to_the_most_any_part_reserves_per_slot():
    """The placement does not say which part a host holds; a limit is never below a reservation."""
    j = job("2*{rusage[mem=100M]} + 1*{rusage[mem=300M]}", tasks=3)
    assert memory_limits(j, [("h1", 2), ("h2", 1)], LSF_ENFORCED) == {"h1": 600 * M, "h2": 300 * M}
    # Parts that share a host: their slots add up there.
    assert memory_limits(j, [("h1", 2), ("h1", 1)], LSF_ENFORCED) == {"h1": 900 * M}
