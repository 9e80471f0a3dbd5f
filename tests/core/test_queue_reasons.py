"""Jobs held back by their queue say so (issue 24): ``queue closed``, ``queue inactive``,
``queue limit: N of N running``, told once and replaced when the queue dispatches again; and a
request naming a resource nobody advertises says that first, even in a full cluster."""

from dataclasses import replace

from xce.testing import Harness, make_host, make_job, queue


def texts(decisions):
    return [(d.jobid, d.reasons[0].step, d.reasons[0].text) for d in decisions if d.OP == "PEND"]


def test_a_closed_queue_tells_its_jobs_once_and_they_run_when_it_opens():
    q = queue("normal", status="closed")
    h = Harness(queues=[q])
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1), make_job(2))
    assert texts(h.round_decisions()) == [(1, "queue", "queue closed"), (2, "queue", "queue closed")]
    assert h.round() == []  # told once
    h.submit(make_job(3))
    assert texts(h.round_decisions()) == [(3, "queue", "queue closed")]
    h.queue_update(replace(q, status="open"))
    assert [d[0] for d in h.round()] == ["DISPATCH"] * 3


def test_an_inactive_queue_tells_its_jobs():
    q = queue("normal", active=False)
    h = Harness(queues=[q])
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1))
    assert texts(h.round_decisions()) == [(1, "queue", "queue inactive")]
    h.queue_update(replace(q, active=True))
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]


def test_a_queue_at_its_limit_says_how_many_run_and_the_reason_clears():
    h = Harness(queues=[queue("normal", max_running=2)])
    h.hosts(make_host("h1").slots(8))
    h.submit(make_job(1), make_job(2), make_job(3), make_job(4))
    out = h.round_decisions()
    assert [d.jobid for d in out if d.OP == "DISPATCH"] == [1, 2]
    assert texts(out) == [(3, "queue", "queue limit: 2 of 2 running"), (4, "queue", "queue limit: 2 of 2 running")]
    assert h.round() == []
    h.state(1, "DONE")
    out = h.round_decisions()
    # Job 3 runs; job 4 is still held by the limit, and was told that already.
    assert [(d.OP, d.jobid) for d in out] == [("DISPATCH", 3)]


def test_a_stale_shortfall_is_replaced_by_the_queue_reason_and_then_by_a_fresh_one():
    q = queue("normal")
    h = Harness(queues=[q])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1))
    h.round()
    h.submit(make_job(2))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.queue_update(replace(q, status="closed"))
    assert texts(h.round_decisions()) == [(2, "queue", "queue closed")]
    h.queue_update(q)
    # Open again, still full: the shortfall is reported again rather than "queue closed" left behind.
    assert h.round() == [("PEND", 2, ("slots",))]


def test_the_unknown_resource_reason_comes_first_in_a_full_cluster():
    h = Harness()
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1))
    h.round()
    h.submit(make_job(2).rusage("example.com/widgets=1"))
    d = h.round_decisions()[0]
    assert (d.reasons[0].step, d.reasons[0].resource) == ("unknown-resource", "example.com/widgets")


def test_a_users_jobs_over_max_running_per_user_say_so_and_others_run():
    h = Harness(queues=[queue("normal", max_running_per_user=1)])
    h.hosts(make_host("h1").slots(8))
    h.submit(make_job(1).user("ann"), make_job(2).user("ann"), make_job(3).user("bob"), make_job(4).user("ann"))
    out = h.round_decisions()
    assert [d.jobid for d in out if d.OP == "DISPATCH"] == [1, 3]
    why = "user limit: 1 running jobs per user in queue normal (max_running_per_user)"
    assert texts(out) == [(2, "user", why), (4, "user", why)]
    assert h.round() == []  # told once
    h.state(1, "DONE")
    out = h.round_decisions()
    assert [(d.OP, d.jobid) for d in out] == [("DISPATCH", 2)]  # job 4 was told already
    h.submit(make_job(5).user("bob"))  # bob is at his limit too now
    assert texts(h.round_decisions()) == [(5, "user", why)]


def test_a_job_with_no_select_held_back_by_closed_hosts_names_them():
    h = Harness()
    h.hosts(make_host("small").slots(1), make_host("big").slots(8).closed())
    h.submit(make_job(1).tasks(4).span("hosts=1"))
    assert texts(h.round_decisions()) == [(1, "slots", "needs slots 4, short by slots 3 (closest host has 1; "
                                                       "unavailable host(s) that could take it: big is closed)")]


def test_a_job_whose_every_host_is_closed_names_them():
    h = Harness()
    h.hosts(make_host("a").slots(2).closed(), make_host("b").slots(2).down())
    h.submit(make_job(1))
    assert texts(h.round_decisions()) == [
        (1, "select", "no host is available; registered host(s): a is closed, b is unavail")]


def test_a_shortfall_no_unavailable_host_would_cure_names_none():
    h = Harness()
    h.hosts(make_host("a").slots(1), make_host("b").slots(2).closed())
    h.submit(make_job(1).tasks(4).span("hosts=1"))
    assert texts(h.round_decisions()) == [(1, "slots", "needs slots 4, short by slots 3 (closest host has 1)")]
