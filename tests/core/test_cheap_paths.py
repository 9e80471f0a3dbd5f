"""The cheaper per-round paths decide exactly as the plain ones they replaced.

* The FCFS picker's per-queue list, kept sorted by in-order arrivals and only losing its stale
  front between sortings, always walks the sorted set of live keys.
* The host walk, which lists the hosts it takes at once, gives each host ``min(p, remaining)``
  (``min(capacity, p, remaining)`` for the fill plan) exactly as a walk one host at a time.
* The ledger's release finds a wide job's hosts by the indexes recorded at dispatch, and by name
  once hosts were added (indexes moved).
"""

import random

import numpy as np

from xce.core.alloc.hosts import HostIter, host_iter
from xce.core.alloc.plans import Plan
from xce.core.model import Job
from xce.core.pickers.fcfs import _QueueEntry
from xce.core.specs import JobSpec
from xce.testing import Harness, make_host, make_job


def _job(jobid: int, priority: int, queue_time: int) -> Job:
    return Job.from_spec(JobSpec(jobid=jobid, user="u", queue="q", queue_time=queue_time, priority=priority))


def _live(entry: _QueueEntry) -> list:
    return [k for k in entry.keys if entry.members.get(k[2]) == k]


def test_the_queue_list_walks_the_sorted_live_keys():
    for seed in range(100):  # random arrivals, re-pushes and removals, tidied between batches
        _check_queue_list(seed)


def _check_queue_list(seed: int) -> None:
    rng = random.Random(seed)
    entry = _QueueEntry.__new__(_QueueEntry)
    entry.keys, entry.members, entry.dirty = [], {}, False
    clock = 0
    for _ in range(6):
        for _ in range(rng.randint(0, 120)):
            r = rng.random()
            if r < 0.5:  # arrivals, mostly in order
                clock += rng.randint(0, 2)
                entry.add(_job(rng.randint(1, 60), -rng.randint(0, 1) if rng.random() < 0.1 else 0, clock))
            elif r < 0.6 and entry.members:  # pushed again after an update, maybe with the same key
                jobid = rng.choice(sorted(entry.members))
                prio, qtime, _ = entry.members[jobid]
                entry.remove(jobid)
                entry.add(_job(jobid, -prio if rng.random() < 0.5 else rng.randint(0, 2), qtime))
            elif entry.members:  # started or ended: the head most often
                keys = sorted(entry.members.values())
                entry.remove((keys[0] if rng.random() < 0.5 else rng.choice(keys))[2])
        entry.tidy()
        live = _live(entry)
        assert live == sorted(entry.members.values()), f"seed {seed}"
        assert len(set(entry.keys)) == len(entry.keys)  # no key listed twice: a job is offered once
        assert not entry.keys or entry.members.get(entry.keys[0][2]) == entry.keys[0]
        assert entry.keys == sorted(entry.keys)


def test_in_order_arrivals_and_starts_need_no_sorting():
    entry = _QueueEntry.__new__(_QueueEntry)
    entry.keys, entry.members, entry.dirty = [], {}, False
    for jobid in range(1, 11):
        entry.add(_job(jobid, 0, jobid))
    entry.remove(1)
    entry.remove(2)
    assert not entry.dirty
    entry.tidy()
    assert [k[2] for k in entry.keys] == list(range(3, 11))
    entry.add(_job(11, 5, 11))  # a higher priority: ahead of the others, sorted at the next tidy
    assert entry.dirty
    entry.tidy()
    assert [k[2] for k in entry.keys] == [11, *range(3, 11)]


def _walk_one_by_one(plan: Plan, ntasks: int, cap: np.ndarray, order) -> list[tuple[int, int]]:
    """Req 3's walk, one host at a time: each candidate in order takes ``min(p, remaining)`` if it
    can take that many (the fill plan: ``min(capacity, p, remaining)``)."""
    placed, remaining = [], ntasks
    for pos in (range(len(cap)) if order is None else order.tolist()):
        if remaining <= 0:
            break
        c = int(cap[pos])
        if plan.fill:
            t = min(c, plan.slots_per_host, remaining)
            if t > 0:
                placed.append((pos, t))
                remaining -= t
        else:
            want = min(plan.slots_per_host, remaining)
            if c >= want:
                placed.append((pos, want))
                remaining -= want
    return placed


def test_the_host_walk_lists_what_a_walk_host_by_host_takes():
    for seed in range(300):
        rng = random.Random(seed)
        nhosts = rng.randint(1, 40)
        cap = np.array([rng.choice((0, 0, 1, 2, 3, 4, 8)) for _ in range(nhosts)], dtype=np.int64)
        order = np.array(rng.sample(range(nhosts), nhosts), dtype=np.int64) if rng.random() < 0.4 else None
        ntasks = rng.randint(1, 30)
        p = rng.randint(1, 9)
        plan = Plan(nhosts=-(-ntasks // p), slots_per_host=p, fill=rng.random() < 0.3)
        want = _walk_one_by_one(plan, ntasks, cap, order)
        got = list(host_iter(plan, ntasks, cap, order))
        assert got == want, f"seed {seed}"
        assert all(type(i) is int and type(t) is int for i, t in got), f"seed {seed}"
        # The same walk searched a few hosts at a time (the block a large cluster is searched by).
        assert list(HostIter(plan, ntasks, cap, order, block=rng.randint(1, 5))) == want, f"seed {seed}"


def test_a_cancelled_session_walks_no_host():
    plan = Plan(nhosts=2, slots_per_host=1)
    assert list(host_iter(plan, 2, np.ones(4, dtype=np.int64), None, lambda: True)) == []


def test_the_host_iterator_keeps_the_specifications_contract():
    """next() gives one candidate at a time and None at the end, ``end`` says so, fini() releases,
    and a session cancelled between candidates ends the walk there."""
    plan = Plan(nhosts=3, slots_per_host=2)
    it = host_iter(plan, 6, np.array([2, 0, 2, 2, 2], dtype=np.int64))
    assert not it.end and it.next() == (0, 2) and it.next() == (2, 2) and it.next() == (3, 2)
    assert it.next() is None and it.end and it.next() is None
    it = host_iter(plan, 6, np.full(5, 2, dtype=np.int64))
    assert it.next() == (0, 2)
    it.fini()
    assert it.end and it.next() is None
    stop = []
    it = host_iter(plan, 6, np.full(5, 2, dtype=np.int64), None, lambda: bool(stop))
    assert it.next() == (0, 2)
    stop.append(True)
    assert it.next() is None and it.end


def test_a_wide_job_releases_its_hosts_after_hosts_were_added():
    h = Harness()
    h.hosts(*(make_host(f"h{i:02d}").slots(1) for i in range(10, 30)))
    h.submit(make_job(1).tasks(12), make_job(2).tasks(3))
    h.round()
    wide = h.core.jobs[1]
    assert len(wide.placement) == 12 and wide.hosts_at is not None
    h.hosts(*(make_host(f"h{i:02d}").slots(1) for i in range(0, 10)))  # sort first: every index moves
    h.core.validate()
    h.state(1, "DONE")
    h.core.validate()
    assert all(1 not in host.jobs for host in h.core.cluster.hosts)
    assert h.core.cluster.inuse_table() == {f"h{i:02d}": {"slots": 1} for i in range(22, 25)}
    h.state(2, "DONE")
    assert h.core.cluster.inuse_table() == {}


def test_a_wide_job_requeued_gives_back_and_takes_again_the_same_hosts():
    h = Harness()
    h.hosts(*(make_host(f"h{i:02d}").slots(2) for i in range(16)))
    h.submit(make_job(1).tasks(20))
    first = h.round()
    h.state(1, "PEND")
    h.core.validate()
    assert h.core.cluster.inuse_table() == {} and h.core.jobs[1].hosts_at is None
    assert h.round() == first
    h.core.validate()
