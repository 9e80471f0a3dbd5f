"""A job proven not to fit is skipped until something that can change the outcome happens
(issue 24): its queue, priority, project or request changes, its queue's preemption settings
change, or anything is released. Each scenario below failed before that rule: the stale skip
kept the older job waiting while a newer job of the same queue preempted and overtook it.
"""

from dataclasses import replace

from xce.testing import Harness, make_host, make_job, queue

HIGH = queue("high", 50, preemptible_queues=["low"])
MID = queue("mid", 30)
LOW = queue("low", 10)


def full_cluster() -> Harness:
    """One slot, taken by a low-priority job; job 2 of ``mid`` (which cannot preempt) failed on it."""
    h = Harness(queues=[HIGH, MID, LOW])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("low"))
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]
    h.submit(make_job(2).queue("mid").priority(5))
    assert h.round() == [("PEND", 2, ("slots",))]
    assert h.round() == []  # skipped: nothing changed, nothing repeated
    return h


def test_a_job_moved_to_a_queue_that_preempts_preempts_in_the_next_round():
    h = full_cluster()
    h.update(2, queue="high")
    h.submit(make_job(3).queue("high").priority(5))
    out = h.round()
    # Job 2 is first in its new queue: it preempts; the newer job 3 does not overtake it.
    assert out[0] == ("PREEMPT", 2, (1,))
    assert ("PREEMPT", 3, (1,)) not in out
    h.state(1, "SSUSP")
    assert h.round()[0] == ("DISPATCH", 2, (("h1", 1),))


def test_a_job_whose_queue_gains_preemptible_queues_preempts():
    h = full_cluster()
    h.queue_update(replace(MID, preemptible_queues=("low",)))
    h.submit(make_job(3).queue("mid").priority(5))
    out = h.round()
    assert out[0] == ("PREEMPT", 2, (1,))
    assert ("PREEMPT", 3, (1,)) not in out


def test_load_reports_do_not_let_a_newer_job_overtake_the_moved_one():
    h = full_cluster()
    h.update(2, queue="high")
    h.resvals({"h1": {"r1m": 0.5}})
    h.resvals({"h1": {"r1m": 0.7}})
    h.submit(make_job(3).queue("high").priority(5))
    assert h.round()[0] == ("PREEMPT", 2, (1,))


def test_a_priority_change_makes_the_job_try_again():
    # In a queue that can preempt only lower-ranked jobs, a job of equal rank fails; raised above the
    # running job it preempts at once.
    h = Harness(queues=[queue("a", 10, preemptible_queues=["a"])])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("a").priority(5))
    h.round()
    h.submit(make_job(2).queue("a").priority(5))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.update(2, priority=9)
    assert h.round()[0] == ("PREEMPT", 2, (1,))


def test_a_project_change_makes_the_job_try_again():
    h = full_cluster()
    h.update(2, project="other")
    tried = []
    allocate = h.core._schedule

    def spy(job, session, allocator):
        tried.append((job.jobid, job.failed_epoch))
        return allocate(job, session, allocator)

    h.core._schedule = spy
    h.round()
    # Job 2 reached the allocator with its skip cleared rather than being passed over.
    assert tried == [(2, -1)]


def test_a_request_change_is_tried_at_once_and_a_smaller_request_runs():
    h = Harness()
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).tasks(3))
    h.round()
    h.submit(make_job(2).tasks(2))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.update(2, tasks=1)
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]


def test_a_request_text_change_is_parsed_and_its_error_reported():
    h = Harness()
    h.hosts(make_host("h1").slots(1).mem("4G"))
    h.submit(make_job(1))
    h.round()
    h.submit(make_job(2).rusage("mem=1G"))
    assert h.round() == [("PEND", 2, ("slots",))]
    h.update(2, request="rusage[mem=")
    assert h.round() == [("PEND", 2, ("request",))]
    h.update(2, request="rusage[mem=1G]")
    assert h.round() == [("PEND", 2, ("slots",))]
    h.state(1, "DONE")
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]


def test_any_release_lets_the_skipped_job_try_again():
    h = Harness()
    h.hosts(make_host("h1").slots(2))
    h.submit(make_job(1), make_job(2))
    h.round()
    h.submit(make_job(3))
    assert h.round() == [("PEND", 3, ("slots",))]
    assert h.round() == []
    h.state(1, "USUSP")  # a suspension gives the slot back
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]


def test_a_running_job_keeps_the_request_it_was_dispatched_with():
    h = Harness()
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).tasks(2))
    h.round()
    h.update(1, tasks=4)
    assert h.core.jobs[1].tasks == 2
    assert h.inuse("h1", "slots") == 2
