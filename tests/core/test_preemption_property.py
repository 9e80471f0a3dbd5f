"""Property: over random clusters and queues, chosen victims never break the priority or
preemptible rules (job priority alone under the default policy, Req 6 AC 9; queue priority first
under ``queue_priority_first``), no smaller set of candidates would do (AC 3), and releasing the set
always makes the preemptor fit."""

from itertools import combinations

from hypothesis import HealthCheck, given, settings, strategies as st

from xce.core.preempt.minimum import EXACT_MAX
from xce.testing import Harness, make_host, make_job, queue

QUEUES = ("q0", "q1", "q2")


@st.composite
def worlds(draw):
    prios = draw(st.lists(st.integers(0, 3), min_size=3, max_size=3))
    queues = []
    for i, name in enumerate(QUEUES):
        targets = draw(st.lists(st.sampled_from(QUEUES), max_size=3, unique=True))
        policy = draw(st.sampled_from(("lowest_priority_first", "queue_priority_first")))
        queues.append(queue(name, prios[i] * 10, preemptible_queues=targets, preemptible=draw(st.booleans()),
                            preempt_policy=policy))
    hosts = [make_host(f"h{i}").slots(draw(st.integers(1, 4))) for i in range(draw(st.integers(1, 4)))]
    jobs = draw(st.lists(st.tuples(st.sampled_from(QUEUES), st.integers(0, 3), st.integers(1, 3)),
                         min_size=1, max_size=10))
    preemptor = draw(st.tuples(st.sampled_from(QUEUES), st.integers(0, 3), st.integers(1, 6)))
    return queues, hosts, jobs, preemptor


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_victims_respect_the_rules_and_free_enough(world):
    queues, hosts, jobs, (pq, pprio, ptasks) = world
    h = Harness(queues=queues)
    h.hosts(*hosts)
    jid = 0
    for q, prio, tasks in jobs:
        jid += 1
        h.submit(make_job(jid).queue(q).priority(prio).tasks(tasks))
        if h.round()[-1][0] != "DISPATCH":
            h.state(jid, "EXIT")
    jid += 1
    h.submit(make_job(jid).queue(pq).priority(pprio).tasks(ptasks))
    out = h.round_decisions()
    preempts = [d for d in out if d.OP == "PREEMPT"]
    if not preempts:
        return
    (p,) = preempts
    core = h.core
    me = core.jobs[jid]
    my_queue = core.queues[pq].spec
    queue_ranked = my_queue.preempt_policy == "queue_priority_first"

    def below(v):
        return core.rank(v) < core.rank(me) if queue_ranked else v.priority < me.priority

    for vid in p.victim_jobids:
        victim = core.jobs[vid]
        assert below(victim)
        assert core.queues[victim.queue].spec.preemptible
        assert victim.queue in my_queue.preemptible_queues
    # Minimal: without any one victim the preemptor would not fit.
    from xce.core.alloc.allocator import Allocator
    from xce.core.preempt.flow import PreemptionView
    from xce.core.session import Session

    session = Session(ts=0)
    view = PreemptionView(core, Allocator(core.cluster, session, lambda: False))
    victims = [core.jobs[v] for v in p.victim_jobids]
    assert view.fits_without(me, victims)
    for v in victims:
        rest = [x for x in victims if x is not v]
        assert not rest or not view.fits_without(me, rest)
    # The smallest: no set of fewer candidates makes room (few candidates: searched exhaustively).
    candidates = [j for j in core.running.values() if j.queue in my_queue.preemptible_queues
                  and core.queues[j.queue].spec.preemptible and below(j)]
    for size in range(1, len(victims) if len(candidates) <= EXACT_MAX else 1):
        assert not any(view.fits_without(me, list(c)) for c in combinations(candidates, size))
    # Releasing the victims really makes it allocatable.
    for vid in p.victim_jobids:
        h.state(vid, "SSUSP")
    assert any(d[0] == "DISPATCH" and d[1] == jid for d in h.round())
