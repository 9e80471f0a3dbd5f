"""What ``easy_backfill`` keeps between attempts and rounds (a pending job's estimate and size, a
running job's slots, the hosts of a reservation read only when shown) follows every change the
hooks report: a kept value that went stale would refuse a job that may start, or the reverse."""

from __future__ import annotations

from xce.testing import Harness, make_host, make_job, queue

NS = 1_000_000_000
REFUSED = ["would delay job 2, which holds a reservation"]


def at(h: Harness, seconds: int) -> None:
    h.ts = seconds * NS - NS  # the harness adds one second per event


def dispatched(decisions):
    return [d[1] for d in decisions if d[0] == "DISPATCH"]


def reasons(h: Harness, jobid: int) -> list[str]:
    return [r.text for r in h.core.jobs[jobid].last_pend or ()]


def blocked(picker: str = "easy_backfill", hosts: int = 4, **queue_kw) -> Harness:
    """Job 1 holds 3 of ``hosts`` slots until t=100; job 2 (all of them) gets the reservation."""
    h = Harness(queues=[queue("normal", **queue_kw)], picker=picker)
    h.hosts(*(make_host(f"h{i}") for i in range(hosts)))
    at(h, 0)
    h.submit(make_job(1).tasks(3).limit(100))
    assert dispatched(h.round()) == [1]
    at(h, 10)
    return h


def test_a_pending_jobs_new_run_limit_is_planned_with():
    h = blocked()
    h.submit(make_job(2).tasks(4).limit(60), make_job(3).limit(1000))
    assert dispatched(h.round()) == [] and reasons(h, 3) == REFUSED
    h.update(3, run_limit=50)  # now it ends before the reservation's start
    assert dispatched(h.round()) == [3]


def test_a_pending_jobs_new_task_count_is_planned_with():
    h = blocked(hosts=5)  # X = 5 - 4 = 1 slot
    h.submit(make_job(2).tasks(4).limit(60), make_job(3).tasks(2).limit(1000))
    assert dispatched(h.round()) == [] and reasons(h, 3) == REFUSED
    h.update(3, tasks=1)
    assert dispatched(h.round()) == [3]


def test_a_new_queue_maximum_changes_the_estimate_of_a_job_without_a_limit():
    h = blocked(max_run_limit=1000)
    h.submit(make_job(2).tasks(4).limit(60), make_job(3))
    assert dispatched(h.round()) == [] and reasons(h, 3) == REFUSED
    h.queue_update(queue("normal", max_run_limit=50))
    assert dispatched(h.round()) == [3]


def test_easy_pp_predicts_a_waiting_job_afresh_when_its_users_jobs_end():
    h = Harness(picker="easy_pp")
    h.hosts(*(make_host(f"h{i}") for i in range(4)))
    at(h, 0)
    h.submit(make_job(1).user("ann").limit(1000), make_job(2).user("ann").limit(1000),
             make_job(3).user("bob").tasks(2).limit(100))
    assert dispatched(h.round()) == [1, 2, 3]
    at(h, 5)
    # No history yet: job 5 is planned with its 1000 s and would run past S (t=1000).
    h.submit(make_job(4).user("bob").tasks(4).limit(10), make_job(5).user("ann").limit(1000))
    assert dispatched(h.round()) == [] and reasons(h, 5) == ["would delay job 4, which holds a reservation"]
    at(h, 10)
    h.state(1, "DONE")
    at(h, 30)
    h.state(2, "DONE")
    # ann's jobs ran about 20 s: job 5 is predicted to end long before S (t=100, when job 3 ends).
    assert dispatched(h.round()) == [5]


def test_a_plain_reservation_names_the_hosts_free_now_and_those_of_the_jobs_walked():
    h = Harness(picker="easy_backfill")
    h.hosts(*(make_host(f"h{i}") for i in range(4)))
    at(h, 0)
    h.submit(make_job(1).limit(100), make_job(2).limit(500))
    assert h.round() == [("DISPATCH", 1, (("h0", 1),)), ("DISPATCH", 2, (("h1", 1),))]
    at(h, 10)
    h.submit(make_job(3).tasks(3).limit(10))
    assert dispatched(h.round()) == []
    assert reasons(h, 3)[-1] == ("holds a reservation: expected to start in 0:01:30 (when job 1 ends, by its run "
                                 "limit) on host(s) h0, h2, h3")
