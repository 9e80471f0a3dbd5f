"""Preemption by suspension and resuming the victims (Req 6, Req 7 AC 3)."""

from xce.testing import Harness, make_host, make_job, queue

QUEUE_RANKED = "queue_priority_first"


def preempt_cluster(slots=4, **low):
    """``high`` preempts ``low`` by queue rank, whatever the job priorities (``queue_priority_first``)."""
    h = Harness(queues=[queue("high", 50, preemptible_queues=["low"], preempt_policy=QUEUE_RANKED),
                        queue("low", 10, **low)])
    h.hosts(make_host("h1").slots(slots))
    return h


def test_a_high_priority_job_suspends_the_lowest_priority_running_job():
    h = preempt_cluster(slots=2)
    h.submit(make_job(1).queue("low").priority(5), make_job(2).queue("low").priority(1))
    h.round()
    h.submit(make_job(3).queue("high"))
    out = h.round_decisions()
    assert [(d.OP) for d in out] == ["PREEMPT", "PEND"]
    assert (out[0].preempting_jobid, out[0].victim_jobids, out[0].signal) == (3, (2,), "SIGSTOP")
    assert out[1].reasons[0].step == "preempt"
    assert "waiting for preempted resources of job(s) 2" in out[1].reasons[0].text
    # The victim's suspension arrives as a state change; the preemptor then runs.
    h.state(2, "SSUSP")
    assert h.inuse("h1", "slots") == 1
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]


def test_the_minimal_victim_set_is_chosen():
    h = Harness(queues=[queue("high", 50, preemptible_queues=["low"], preempt_policy=QUEUE_RANKED), queue("low", 10)])
    h.hosts(make_host("a").slots(1), make_host("b").slots(2), make_host("c").slots(4))
    h.submit(make_job(1).queue("low").tasks(1), make_job(2).queue("low").tasks(2).span("hosts=1"),
             make_job(3).queue("low").tasks(4).span("hosts=1"))
    assert [d[0] for d in h.round()] == ["DISPATCH"] * 3
    h.submit(make_job(9).queue("high").tasks(4).span("hosts=1"))
    assert h.round() == [("PREEMPT", 9, (3,)), ("PEND", 9, ("preempt",))]


def test_victims_are_ranked_lowest_priority_then_most_recently_started():
    h = preempt_cluster(slots=3)
    h.submit(make_job(1).queue("low").priority(2))
    h.round()
    h.submit(make_job(2).queue("low").priority(2))
    h.round()
    h.submit(make_job(3).queue("low").priority(3))
    h.round()
    h.submit(make_job(4).queue("high"))
    # Jobs 1 and 2 share the lowest priority; job 2 started later, so it loses least work.
    assert h.round()[0] == ("PREEMPT", 4, (2,))


def test_equal_priority_is_never_preempted():
    h = Harness(queues=[queue("a", 10, preemptible_queues=["a"])])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("a").priority(5))
    h.round()
    h.submit(make_job(2).queue("a").priority(5))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.submit(make_job(3).queue("a").priority(6))
    assert h.round()[0] == ("PREEMPT", 3, (1,))


def test_a_non_preemptible_queue_is_protected():
    h = preempt_cluster(slots=1, preemptible=False)
    h.submit(make_job(1).queue("low"))
    h.round()
    h.submit(make_job(2).queue("high"))
    assert h.round() == [("PEND", 2, ("slots",))]


def test_no_second_wave_of_victims_while_the_first_is_in_flight():
    h = preempt_cluster(slots=2)
    h.submit(make_job(1).queue("low"), make_job(2).queue("low"))
    h.round()
    h.submit(make_job(3).queue("high"))
    # Both started in the same round: the job id breaks the tie.
    assert h.round()[0] == ("PREEMPT", 3, (1,))
    # Job 1 has not been suspended yet: job 3 waits and no new victim is chosen (its reason is
    # unchanged, so no new PEND either).
    h.submit(make_job(4).queue("low"))
    assert h.round() == [("PEND", 4, ("slots",))]
    assert h.round() == []
    assert h.core.jobs[3].waiting_for == (1,)
    assert h.core.jobs[2].preempted_by is None


def test_the_victim_resumes_after_the_preempting_job_finishes():
    h = preempt_cluster(slots=1)
    h.submit(make_job(1).queue("low"))
    h.round()
    h.submit(make_job(2).queue("high"))
    h.round()
    h.state(1, "SSUSP")
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]
    assert h.round() == []  # the slot is taken: no resume yet
    h.state(2, "DONE")
    assert h.round() == [("RESUME", 1)]
    assert h.inuse("h1", "slots") == 1
    h.state(1, "RUN")
    assert h.core.jobs[1].state == "RUN" and not h.core.preempted
    h.submit(make_job(3).queue("low"))
    assert h.round() == [("PEND", 3, ("slots",))]


def test_a_victim_is_not_resumed_while_a_higher_job_that_may_preempt_it_waits():
    h = preempt_cluster(slots=2)
    h.submit(make_job(1).queue("low").tasks(2))
    h.round()
    h.submit(make_job(2).queue("high").tasks(2))
    h.round()
    h.state(1, "SSUSP")
    h.submit(make_job(3).queue("high").tasks(2))
    assert h.round() == [("DISPATCH", 2, (("h1", 2),)), ("PEND", 3, ("slots",))]
    h.state(2, "DONE")
    # Job 3 outranks the victim and may preempt it: the slots go to job 3, not back to job 1.
    assert h.round() == [("DISPATCH", 3, (("h1", 2),))]


def test_suspended_victim_keeps_its_memory_charged():
    h = preempt_cluster(slots=1)
    h.core.cluster  # noqa: B018
    h.hosts(make_host("h1").slots(1).mem("8G"))
    h.submit(make_job(1).queue("low").rusage("mem=2G"))
    h.round()
    h.submit(make_job(2).queue("high").rusage("mem=2G"))
    h.round()
    h.state(1, "SSUSP")
    assert h.inuse("h1", "mem") == 2 * 1024**3
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]
    assert h.inuse("h1", "mem") == 4 * 1024**3


def test_the_unsatisfiable_cache_is_not_filled_when_preemption_succeeded():
    h = preempt_cluster(slots=2)
    h.submit(make_job(1).queue("low"), make_job(2).queue("low"))
    h.round()
    h.submit(make_job(3).queue("high"), make_job(4).queue("high"))
    out = h.round_decisions()
    # Job 4 has the same request and rank as job 3 but is not pended from the cache:
    # it gets its own victim.
    assert [(d.OP, getattr(d, "preempting_jobid", getattr(d, "jobid", None))) for d in out] == [
        ("PREEMPT", 3), ("PEND", 3), ("PREEMPT", 4), ("PEND", 4)]
    assert out[0].victim_jobids == (1,) and out[2].victim_jobids == (2,)
    assert all(r.proven_by is None for d in out if d.OP == "PEND" for r in d.reasons)


def test_preemption_signal_is_configurable_per_queue():
    h = Harness(queues=[queue("high", 50, preemptible_queues=["low"], preempt_signal="SIGTSTP",
                              preempt_policy=QUEUE_RANKED), queue("low", 1)])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("low"))
    h.round()
    h.submit(make_job(2).queue("high"))
    assert h.round_decisions()[0].signal == "SIGTSTP"


def test_the_default_policy_compares_job_priorities_only():
    """Req 6 AC 9: a victim's priority is below the preemptor's, whatever the queues' priorities."""
    h = Harness(queues=[queue("high", 50, preemptible_queues=["low"]), queue("low", 10)])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("low").priority(100))
    h.round()
    h.submit(make_job(2).queue("high").priority(1))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.submit(make_job(3).queue("high").priority(101))
    assert h.round()[0] == ("PREEMPT", 3, (1,))


def test_queue_priority_first_lets_a_higher_queue_preempt_a_higher_job_priority():
    h = preempt_cluster(slots=1)
    h.submit(make_job(1).queue("low").priority(100))
    h.round()
    h.submit(make_job(2).queue("high").priority(1))
    assert h.round()[0] == ("PREEMPT", 2, (1,))


def two_small_and_one_wide(extra_hosts=()):
    """Host a runs two priority-1 jobs, host b one priority-2 job of two tasks."""
    h = Harness(queues=[queue("high", 50, preemptible_queues=["low"]), queue("low", 10)])
    h.hosts(make_host("a").slots(2), make_host("b").slots(2), *extra_hosts)
    h.submit(make_job(1).queue("low").priority(1), make_job(2).queue("low").priority(1),
             make_job(3).queue("low").priority(2).tasks(2).span("hosts=1"))
    return h


def test_the_smallest_victim_set_wins_over_the_lowest_priorities():
    h = two_small_and_one_wide()
    assert [d[0] for d in h.round()] == ["DISPATCH"] * 3
    h.submit(make_job(9).queue("high").priority(5).tasks(2).span("hosts=1"))
    # Taking the lowest priorities first needs jobs 1 and 2; job 3 alone frees a host (AC 3: minimum).
    assert h.round()[0] == ("PREEMPT", 9, (3,))


def test_beyond_the_exact_bound_the_irreducible_set_in_rank_order_stands():
    from xce.core.preempt.minimum import EXACT_MAX

    h = two_small_and_one_wide([make_host("c").slots(EXACT_MAX)])
    h.submit(*(make_job(10 + i).queue("low").priority(3) for i in range(EXACT_MAX)))
    assert [d[0] for d in h.round()] == ["DISPATCH"] * (3 + EXACT_MAX)
    h.submit(make_job(99).queue("high").priority(5).tasks(2).span("hosts=1"))
    assert h.round()[0] == ("PREEMPT", 99, (1, 2))
