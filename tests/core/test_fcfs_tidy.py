"""The FCFS picker's per-queue list, compacted at ``begin_session``: filtered and sorted as a list
(linear on the mostly sorted keys) it must be exactly the sorted set of live keys it replaced."""

import random

import pytest

from xce.core.pickers.fcfs import _QueueEntry


@pytest.mark.parametrize("seed", range(200))
def test_tidy_gives_the_sorted_unique_live_keys(seed):
    rng = random.Random(seed)
    entry = _QueueEntry.__new__(_QueueEntry)
    entry.keys, entry.members, entry.dirty = [], {}, False
    for _ in range(3):
        for _ in range(rng.randint(0, 200)):
            jobid = rng.randint(1, 40)
            if rng.random() < 0.6:  # pushed, or pushed again after an update (maybe the same key)
                key = (-rng.randint(0, 2), rng.randint(0, 5), jobid)
                entry.members[jobid] = key
                entry.keys.append(key)
                entry.dirty = True
            else:
                entry.remove(jobid)
                entry.dirty = True
        want = sorted({k for k in entry.keys if entry.members.get(k[2]) == k})
        entry.tidy()
        assert entry.keys == want
        assert not entry.dirty
