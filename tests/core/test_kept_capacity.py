"""A job's per-host capacity is kept across the dispatches of a round and refreshed only for the
hosts they charged: every job must still see exactly what a fresh computation gives, so later jobs
of a round see what earlier ones took, and a failed compound's rollback gives it back."""

import random

import numpy as np
import pytest

from xce.core.alloc.allocator import Allocator
from xce.testing import Harness, make_host, make_job


def test_later_jobs_of_a_round_see_the_memory_earlier_ones_took():
    h = Harness()
    h.hosts(*(make_host(f"h{i}").slots(8).mem("4G") for i in range(3)))
    h.submit(*(make_job(j).rusage("mem=3G") for j in range(1, 5)))
    decisions = h.round()
    assert decisions[:3] == [("DISPATCH", 1, (("h0", 1),)), ("DISPATCH", 2, (("h1", 1),)),
                             ("DISPATCH", 3, (("h2", 1),))]
    assert decisions[3][:2] == ("PEND", 4)
    # Slots are left everywhere; memory is what stops the fourth job, on every host.
    assert h.round() == []


def test_a_failed_compound_gives_back_what_its_first_part_took_within_the_round():
    h = Harness()
    h.hosts(make_host("a").slots(2).mem("8G"), make_host("b").slots(2).mem("8G"))
    # Job 1's first part fits on a; its second part (3 tasks of 4G on one host) cannot: rolled back.
    h.submit(make_job(1).request("1*{rusage[mem=6G]} + 3*{span[hosts=1] rusage[mem=1G]}"),
             make_job(2).rusage("mem=6G"), make_job(3).rusage("mem=6G"))
    decisions = h.round()
    assert decisions[0][:2] == ("PEND", 1)
    assert decisions[1:] == [("DISPATCH", 2, (("a", 1),)), ("DISPATCH", 3, (("b", 1),))]


@pytest.mark.parametrize("seed", range(6))
def test_the_kept_capacity_always_equals_a_fresh_one(monkeypatch, seed):
    """Random hosts, requests and rounds with releases in between: at every ask, the kept vector is
    the one computed from scratch."""
    rng = random.Random(seed)
    asked = [0]
    kept_capacity = Allocator.capacity

    def checked(self, primary):
        cap = kept_capacity(self, primary)
        fresh = self._capacity_of(primary)[0]
        if fresh is None:
            fresh = self.cluster.free_slots_ok()
        assert np.array_equal(cap, fresh), (primary, cap.tolist(), fresh.tolist())
        asked[0] += 1
        return cap

    monkeypatch.setattr(Allocator, "capacity", checked)
    h = Harness()
    h.hosts(*(make_host(f"h{i:02d}").slots(rng.choice((2, 4, 8))).mem(f"{rng.choice((4, 8, 16))}G")
              .value("type", rng.choice(("X86_64", "ARM64"))) for i in range(20)))
    requests = ("", "rusage[mem=1G]", "rusage[mem=3G]", 'select[type == "X86_64"] rusage[mem=2G]',
                'select[type == "ARM64"]', "order[-mem] rusage[mem=2G]", "span[hosts=1] rusage[mem=1G]")
    jobid = 0
    for _ in range(4):
        batch = []
        for _ in range(rng.randint(40, 80)):
            jobid += 1
            batch.append(make_job(jobid).request(rng.choice(requests)).tasks(rng.choice((1, 1, 2, 3, 6))))
        h.submit(*batch)
        h.round()
        running = [j for j in h.core.jobs.values() if j.state == "RUN"]
        for job in rng.sample(running, len(running) // 3):
            h.state(job.jobid, "DONE")
    assert asked[0] > 100
