"""Told the most tasks any host could take, the plan iterator leaves out exactly the equal-share
plans that give each host more, and nothing else: the allocator, which skipped those one by one,
tries the same plans in the same order."""

import random

from xce.core.alloc.plans import plan_iter
from xce.core.resreq import RequestSyntaxError, parse_request


def _primary(text: str, n: int):
    return parse_request(text, n).alternatives[0].primaries[0]


def test_plans_a_host_could_take_are_the_ones_left():
    rng = random.Random(7)
    cases = [(n, most) for n in (1, 2, 3, 7, 12, 100, 1166) for most in (0, 1, 2, 3, 5, 11, 12, 13, 2000)]
    cases += [(rng.randint(1, 5000), rng.randint(0, 60)) for _ in range(200)]
    for n, most in cases:
        for text in ("", "span[ptile=3]", "span[hosts=1]"):
            try:
                p = _primary(text, n)
            except RequestSyntaxError:  # a span this n cannot have
                continue
            every = [plan for plan in plan_iter(p) if plan.slots_per_host <= most or plan.fill]
            told = [plan for plan in plan_iter(p, most) if plan.slots_per_host <= most or plan.fill]
            assert told == every, (text, n, most)
