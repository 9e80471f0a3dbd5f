"""A request's host order (``order[]``) is kept across rounds; when hosts report new values only
their places move. At every ask it must be the order a fresh stable sort gives, ties by name."""

import random

import numpy as np
import pytest

from xce.core import SchedulerCore, events as ev
from xce.core.alloc.allocator import Allocator, _lookup
from xce.core.resreq import parse_request
from xce.core.session import Session
from xce.core.specs import HostSpec

G = 1024**3


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_order_always_equals_a_fresh_sort(seed):
    rng = random.Random(seed)
    core = SchedulerCore(lambda d: None)
    names = [f"h{i:02d}" for i in range(40)]
    core.push_event(ev.WorkersPush(ts=1, hosts=tuple(
        HostSpec(n, values={"slots": rng.choice((2, 4)), "maxmem": 64 * G}) for n in names)))
    core.push_event(ev.ResvalsFull(ts=1, values={n: {"mem": rng.choice((1, 2, 4)) * G, "ut": 0.5} for n in names}))
    primaries = [parse_request(text, 1).alternatives[0].primaries[0]
                 for text in ("order[-mem]", "order[ut]", "order[-mem:ut]", "order[mem - 2 * ut]")]
    allocator = Allocator(core.cluster, Session(ts=0), lambda: False)
    hosts = core.cluster.hosts
    for step in range(150):
        # A few hosts change (often to values others already have: ties), now and then most of them.
        changed = rng.sample(names, rng.choice((1, 1, 2, 3, 30)))
        event = rng.choice((ev.ResvalsDelta, ev.ResvalsFull))
        core.push_event(event(ts=2 + step, values={
            n: {"mem": rng.choice((1, 2, 4, 8)) * G, "ut": rng.choice((0, 0.25, 0.5, 1))} for n in changed}))
        for primary in rng.sample(primaries, rng.randint(1, len(primaries))):
            keys = [primary.order_key(_lookup(h)) for h in hosts]
            fresh = np.array(sorted(range(len(hosts)), key=keys.__getitem__), dtype=np.int64)
            assert np.array_equal(allocator._order(primary), fresh), (step, primary)
