"""A placement packs into the same runs however it is given: by host names one host at a time, by
names through the vector path wide placements take, or by host indexes (what the simulator passes
for a wide job, taken from the core's ledger)."""

import random
from array import array

import numpy as np

from xce.sim.placement import WIDE, Placements


def _runs_one_by_one(hosts: list[int], tasks: list[int]) -> bytes:
    """Consecutive hosts with equal tasks make one run, walked host by host."""
    runs: list[list[int]] = []
    for h, t in zip(hosts, tasks, strict=True):
        if runs and runs[-1][2] == t and runs[-1][0] + runs[-1][1] == h:
            runs[-1][1] += 1
        else:
            runs.append([h, 1, t])
    return array("i", [x for run in runs for x in run]).tobytes()


def _random_placement(rng: random.Random, nhosts: int) -> tuple[list[int], list[int]]:
    width = rng.choice((1, 2, 5, 40, WIDE - 1, WIDE, WIDE + 1, 3000))
    if rng.random() < 0.5:  # name order with a few gaps, as the core usually fills hosts
        hosts = sorted(rng.sample(range(nhosts), width))
    else:  # any order (an ``order[]`` request)
        hosts = rng.sample(range(nhosts), width)
    tasks = [rng.choice((1, 1, 2, 4)) for _ in hosts]
    return hosts, tasks


def test_names_and_indexes_pack_the_same_runs():
    nhosts = 5000
    names = [f"n{i:04d}" for i in range(nhosts)]
    for seed in range(300):
        rng = random.Random(seed)
        hosts, tasks = _random_placement(rng, nhosts)
        placement = tuple((names[h], t) for h, t in zip(hosts, tasks, strict=True))
        by_name, by_index = Placements(names, 1), Placements(names, 1)
        by_name.set(0, placement)
        by_index.set_indexes(0, np.array(hosts, dtype=np.int64), np.array(tasks, dtype=np.int64))
        expected = _runs_one_by_one(hosts, tasks)
        assert by_name.packed(0) == expected, f"seed {seed}"
        assert by_index.packed(0) == expected, f"seed {seed}"
        assert by_index[0] == placement, f"seed {seed}"


def test_an_empty_placement_packs_to_nothing():
    p = Placements(["a", "b"], 2)
    p.set(0, ())
    p.set_indexes(1, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert p.packed(0) == p.packed(1) == b"" and p[0] == p[1] == ()
