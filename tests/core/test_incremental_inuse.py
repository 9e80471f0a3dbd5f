"""In-use is kept by the charges alone: no round re-derives it. After every event of random
streams (usage ticks, releases, suspensions, preemption, host value changes), with nothing
re-deriving in between, every column equals its recomputation from the jobs' own records, and
every cache built on the columns (availability, free slots, the kept capacity vectors) equals a
fresh computation. Usage charges wait outside the columns until they are read
(``Cluster.charge_later``): reading them must give the same figures."""

import random

import numpy as np
import pytest

from xce.core import SchedulerCore
from xce.core.alloc.allocator import Allocator
from xce.core.session import Session
from xce.testing import Harness, make_host, make_job
from xce.testing.scenarios import closed_loop_events, random_events

G = 1024**3


def check_bookkeeping(core: SchedulerCore) -> None:
    cluster = core.cluster
    derived = cluster.derive_inuse()
    for res in set(derived) | set(cluster._inuse):
        want = np.zeros(len(cluster.hosts), dtype=np.int64)
        for i, amount in derived.get(res, {}).items():
            want[i] = amount
        assert np.array_equal(cluster.inuse(res), want), (res, cluster.inuse(res).tolist(), want.tolist())
    pools = {r: 0 for r in cluster.pools}
    for job in core.jobs.values():
        if job.real_charged:
            for r, amount in job.shared_charged.items():
                if r in pools:
                    pools[r] += amount
    assert {r: p.inuse for r, p in cluster.pools.items()} == pools
    for res, col in cluster._avail.items():
        assert np.array_equal(col, cluster.total(res) - cluster.inuse(res)), res
    if cluster._free_ok is not None:
        assert np.array_equal(cluster._free_ok, np.where(cluster.ok, cluster.available("slots"), 0))
    # Every kept capacity vector, refreshed from the journal as the next ask would, is a fresh one.
    allocator = Allocator(cluster, Session(ts=0), lambda: False)
    for primary, _, _ in list(cluster._caps.values()):
        kept = allocator.capacity(primary)
        fresh = allocator._capacity_of(primary)[0]
        if fresh is None:
            fresh = cluster.free_slots_ok()
        assert np.array_equal(kept, fresh), (primary, kept.tolist(), fresh.tolist())


def replay_checked(events, every: int = 1) -> tuple[int, int]:
    """Push ``events``, checking the bookkeeping after every ``every``-th; returns how many checks
    ran and how many found usage charges not yet written into the columns (``charge_later``)."""
    core = SchedulerCore(lambda d: None, seed=3)
    checked = pending = 0
    for n, e in enumerate(events):
        core.clock.freeze_at(e.ts)
        core.push_event(e)
        if n % every == 0:
            pending += bool(core.cluster._later)
            check_bookkeeping(core)
            checked += 1
    check_bookkeeping(core)
    return checked, pending


@pytest.mark.parametrize("seed", range(4))
def test_random_streams_keep_inuse_equal_to_its_rederivation(seed):
    assert replay_checked(random_events(seed=seed, njobs=150))[0] > 150


@pytest.mark.parametrize("seed,nhosts", [(0, 12), (1, 12), (2, 12), (3, 64), (4, 64)])
def test_closed_loop_streams_with_usage_ticks_keep_inuse_equal_to_its_rederivation(seed, nhosts):
    # 64 hosts: usage ticks between two rounds touch more hosts than are refreshed one by one
    # and fewer than half of them, so kept vectors are refreshed as one vector operation.
    events = closed_loop_events(seed, njobs=400, nhosts=nhosts, usage_ticks=4)
    assert sum(type(e).__name__ == "JobRusage" for e in events) > 500
    checked, pending = replay_checked(events)
    assert checked > 1000
    assert pending > 100  # the deferred usage charges were read back, not only the columns


@pytest.mark.parametrize("seed", range(6))
def test_usage_where_memory_binds_reaches_the_kept_capacities(seed):
    """Hosts whose memory, not slots, limits how many tasks fit: every usage report changes a kept
    capacity vector, which the next ask must see (the deferred charges are journaled)."""
    rng = random.Random(seed)
    h = Harness(validate=False)
    h.hosts(*(make_host(f"h{i}").slots(8).mem(f"{rng.choice((4, 6, 8))}G") for i in range(24)))
    jobid = 0
    for _ in range(6):
        batch = []
        for _ in range(rng.randint(10, 30)):
            jobid += 1
            batch.append(make_job(jobid).rusage(f"mem={rng.choice((1, 2))}G"))
        h.submit(*batch)
        h.round()
        running = [j.jobid for j in h.core.jobs.values() if j.state == "RUN"]
        for _ in range(rng.randint(20, 60)):
            h.usage(rng.choice(running), memory_rss=rng.randint(0, 5) * G)
        assert h.core.cluster._later
        check_bookkeeping(h.core)
        for done in rng.sample(running, len(running) // 3):
            h.state(done, "DONE")
