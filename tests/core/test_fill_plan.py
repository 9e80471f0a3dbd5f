"""The fill plan (issue 17): after the specification's equal-share plans, hosts filled in order.

Exact decision sequences through the real core, as every scenario test here.
"""

import random

import pytest

from xce.core.alloc.plans import plan_iter, spec_plans
from xce.core.resreq import parse_request
from xce.testing import Harness, make_host, make_job


def shape(plans):
    return [(p.nhosts, p.slots_per_host, p.fill) for p in plans]


def primary(text, n):
    return parse_request(text, n).alternatives[0].primaries[0]


def test_the_fill_plan_comes_last_after_the_unchanged_specification_plans():
    assert shape(plan_iter(primary("", 5))) == [(1, 5, False), (2, 3, False), (3, 2, False), (5, 1, False),
                                                (1, 5, True)]
    assert shape(plan_iter(primary("span[ptile=2]", 5))) == [(3, 2, False)]
    assert shape(plan_iter(primary("span[hosts=1]", 5))) == [(1, 5, False)]
    assert shape(plan_iter(primary("", 1))) == [(1, 1, False)]
    for n in range(1, 40):
        for text in ("", "span[ptile=3]", "span[hosts=1]"):
            spec = shape(spec_plans(primary(text, n)))
            assert shape(plan_iter(primary(text, n)))[:len(spec)] == spec


def test_5_tasks_on_hosts_with_4_and_1_free_dispatch_as_4_plus_1():
    h = Harness()
    h.hosts(make_host("a").slots(4), make_host("b").slots(1))
    h.submit(make_job(1).tasks(5))
    assert h.round() == [("DISPATCH", 1, (("a", 4), ("b", 1)))]
    assert h.inuse("a", "slots") == 4 and h.inuse("b", "slots") == 1


def test_uneven_free_slots_left_by_a_running_job_are_filled_in_host_order():
    h = Harness()
    h.hosts(make_host("a").slots(4), make_host("b").slots(4))
    h.submit(make_job(1).tasks(3).span("hosts=1"))
    assert h.round() == [("DISPATCH", 1, (("a", 3),))]
    h.submit(make_job(2).tasks(5))
    # Free: a 1, b 4. No equal share fits (5x1, 3+2, 2+2+1, 1x5 all need other hosts).
    assert h.round() == [("DISPATCH", 2, (("a", 1), ("b", 4)))]


def test_span_hosts_1_still_pends_with_the_closest_host_shortfall():
    h = Harness()
    h.hosts(make_host("a").slots(4), make_host("b").slots(1))
    h.submit(make_job(1).tasks(5).span("hosts=1"))
    [d] = h.round_decisions()
    assert d.OP == "PEND"
    r = d.reasons[0]
    assert (r.step, r.resource, r.needed, r.short) == ("span", "slots", 5, 1)
    assert "closest host has 4" in r.text


def test_ptile_places_exactly_ptile_per_host_never_fewer_to_fill():
    """LSF's span[ptile=p]: p slots on each host (the last may take fewer), as MPI launchers that
    start p ranks a host expect; so no fill plan."""
    h = Harness()
    h.hosts(make_host("a").slots(2), make_host("b").slots(1), make_host("c").slots(1), make_host("d").slots(3))
    h.submit(make_job(1).tasks(6).span("ptile=2"))
    # three hosts with 2 free are needed; only a and d have them: it waits, never 2 + 1 + 1 + 2
    assert [d.OP for d in h.round_decisions()] == ["PEND"]
    h.submit(make_job(2).tasks(5).span("ptile=2"))  # 2 + 2 + 1: the last host takes the rest
    h.hosts(make_host("a").slots(2), make_host("b").slots(1), make_host("c").slots(1), make_host("d").slots(3),
            make_host("e").slots(2))
    assert h.round()[:1] == [("DISPATCH", 1, (("a", 2), ("d", 2), ("e", 2)))]


def test_ptile_shortfall_counts_at_most_ptile_per_host():
    h = Harness()
    h.hosts(make_host("a").slots(4), make_host("b").slots(1))
    h.submit(make_job(1).tasks(5).span("ptile=2"))
    [d] = h.round_decisions()
    r = d.reasons[0]
    assert (d.OP, r.step, r.resource, r.needed, r.short) == ("PEND", "span", "slots", 5, 2)
    assert "candidate hosts have 3 at ptile 2" in r.text


def test_the_pend_reason_names_the_real_shortfall_when_resources_sit_on_different_hosts():
    h = Harness()
    h.hosts(make_host("a").slots(4).value("example.com/cores", 0),
            make_host("b").slots(1).value("example.com/cores", 8))
    h.submit(make_job(1).tasks(4).rusage("example.com/cores=1"))
    [d] = h.round_decisions()
    r = d.reasons[0]
    # 5 slots and 8 cores are free in all, but only b has both: it takes 1 of the 4 tasks.
    assert (d.OP, r.step, r.resource, r.needed, r.short) == ("PEND", "span", "slots", 4, 3)
    assert "can take 1 of its 4 tasks" in r.text


def test_too_few_free_slots_pend_with_free_versus_needed():
    h = Harness()
    h.hosts(make_host("a").slots(4), make_host("b").slots(1))
    h.submit(make_job(1).tasks(6))
    [d] = h.round_decisions()
    r = d.reasons[0]
    assert (d.OP, r.step, r.resource, r.needed, r.short) == ("PEND", "slots", "slots", 6, 1)
    assert "candidate hosts have 5" in r.text


@pytest.mark.parametrize("seed", range(30))
def test_placements_the_specification_plans_found_are_found_the_same_way(seed, monkeypatch):
    """Random clusters and jobs: a round with the fill plan dispatches every job the spec's plans
    dispatched, on the same hosts, until the first job only the fill plan can place."""
    rnd = random.Random(seed)
    hosts = [make_host(f"h{i:02d}").slots(rnd.randint(1, 6)) for i in range(rnd.randint(2, 8))]
    jobs = []
    for j in range(1, 12):
        b = make_job(j).tasks(rnd.randint(1, 10))
        if rnd.random() < 0.2:
            b = b.span(f"ptile={rnd.randint(1, 4)}")
        jobs.append(b)

    def run():
        h = Harness()
        h.hosts(*hosts)
        h.submit(*jobs)
        return h.round()

    with_fill = run()
    import xce.core.alloc.allocator as allocator
    monkeypatch.setattr(allocator, "plan_iter", spec_plans)
    without = run()
    for a, b in zip(with_fill, without):
        if a != b:
            # The first difference: the spec's plans could not place it, the fill plan did.
            assert b[0] == "PEND" and a[0] == "DISPATCH"
            break
