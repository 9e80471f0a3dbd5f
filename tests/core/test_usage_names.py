"""Which names of a usage tick are charged, and as which resource, is worked out once per set of
names and kept until the name map or the resource catalog changes. At every tick it must be what
resolving the names afresh gives."""

import random

import pytest

from xce.core import SchedulerCore, events as ev
from xce.core.specs import ResourceDef, SchedConfig


def fresh(usage, names, catalog):
    out = []
    for wire_name in sorted(usage):
        res = names.get(wire_name, wire_name)
        rdef = catalog.get(res)
        if rdef is not None and rdef.real and rdef.consumable:
            out.append((wire_name, res))
    return tuple(out)


@pytest.mark.parametrize("seed", range(10))
def test_the_kept_resolution_always_equals_a_fresh_one(seed):
    rng = random.Random(seed)
    core = SchedulerCore(lambda d: None)
    wire = ("memory_rss", "cpu_time", "mem", "example.com/gpu_mem", "example.com/scratch", "gpu_rss")
    for step in range(300):
        r = rng.random()
        if r < 0.05:  # a new name map
            core.push_event(ev.ConfigPush(ts=step, config=SchedConfig(resource_names=dict(
                rng.sample([("memory_rss", "mem"), ("gpu_rss", "example.com/gpu_mem"),
                            ("cpu_time", "example.com/scratch")], rng.randint(0, 3))))))
        elif r < 0.1:  # a definition registered or replaced
            core.push_event(ev.ResourcesPush(ts=step, resources=(ResourceDef(
                rng.choice(("example.com/gpu_mem", "example.com/scratch")), consumable=rng.random() < 0.7,
                real=rng.random() < 0.7),)))
        usage = {name: rng.randint(0, 9) for name in rng.sample(wire, rng.randint(0, len(wire)))}
        got = core.ledger._charged(usage, core.resource_names, core.catalog)
        assert got == fresh(usage, core.resource_names, core.catalog), (step, usage)
