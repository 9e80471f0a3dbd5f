"""The plan iterator (Req 2): exact sequences, span, the stable end signal, close().

The sequences are the specification's plans (``spec_plans``); ``plan_iter`` adds the fill plan after
them (tests/core/test_fill_plan.py)."""

import pytest

from xce.core.alloc.plans import Plan, plan_iter, spec_plans
from xce.core.resreq import parse_request

EXPECTED_P = {
    1: [1], 2: [2, 1], 3: [3, 2, 1], 4: [4, 2, 1], 5: [5, 3, 2, 1], 6: [6, 3, 2, 1],
    7: [7, 4, 3, 2, 1], 8: [8, 4, 3, 2, 1], 9: [9, 5, 3, 2, 1], 10: [10, 5, 4, 3, 2, 1],
    11: [11, 6, 4, 3, 2, 1], 12: [12, 6, 4, 3, 2, 1],
}


def primary(text, n):
    return parse_request(text, n).alternatives[0].primaries[0]


def shape(plans):
    return [(p.nhosts, p.slots_per_host) for p in plans]


@pytest.mark.parametrize("n", range(1, 13))
def test_plan_sequence_without_span(n):
    expected = [(-(-n // p), p) for p in EXPECTED_P[n]]
    assert shape(spec_plans(primary("", n))) == expected


@pytest.mark.parametrize("n", range(1, 13))
def test_span_hosts_1_is_one_plan(n):
    assert shape(plan_iter(primary("span[hosts=1]", n))) == [(1, n)]  # no fill plan either


@pytest.mark.parametrize("n", range(1, 13))
def test_span_ptile_gives_only_that_packing(n):
    p = min(3, n)
    assert shape(spec_plans(primary("span[ptile=3]", n))) == [(-(-n // p), p)]


def test_plans_are_lazy_and_the_end_is_stable():
    it = plan_iter(primary("", 1_000_000_000))
    assert next(it) == Plan(1, 1_000_000_000, it.gi_frame.f_locals["primary"])
    assert next(it).slots_per_host == 500_000_000
    small = plan_iter(primary("", 2))
    assert shape([next(small), next(small), next(small)]) == [(1, 2), (2, 1), (1, 2)]  # the last: fill
    for _ in range(3):
        with pytest.raises(StopIteration):
            next(small)


def test_close_releases_the_iterator():
    it = plan_iter(primary("", 12))
    next(it)
    it.close()
    with pytest.raises(StopIteration):
        next(it)
