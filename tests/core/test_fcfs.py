"""builtin_fcfs ordering, fed through the core by events (Req 8)."""

from xce.core.pickers import BasePicker, register
from xce.core.pickers.registry import unregister
from xce.testing import Harness, make_host, make_job, queue


def many_slots(h, n=100):
    h.hosts(make_host("h1").slots(n))


def dispatched(decisions):
    return [d[1] for d in decisions if d[0] == "DISPATCH"]


def test_order_across_three_queues_with_mixed_priorities_and_queue_times():
    h = Harness(queues=[queue("low", 10), queue("high", 50), queue("mid", 30)])
    many_slots(h)
    h.submit(
        make_job(1).queue("low").priority(0).at(100),
        make_job(2).queue("mid").priority(0).at(300),
        make_job(3).queue("mid").priority(5).at(400),
        make_job(4).queue("high").priority(0).at(500),
        make_job(5).queue("mid").priority(0).at(200),
        make_job(6).queue("low").priority(9).at(600),
        make_job(7).queue("high").priority(0).at(500),  # same time as 4: job id breaks the tie
    )
    assert dispatched(h.round()) == [4, 7, 3, 5, 2, 6, 1]


def test_equal_queue_priorities_are_ordered_by_name():
    h = Harness(queues=[queue("zeta", 10), queue("alpha", 10)])
    many_slots(h)
    h.submit(make_job(1).queue("zeta"), make_job(2).queue("alpha"))
    assert dispatched(h.round()) == [2, 1]


class ShortestFirst(BasePicker):
    """A test picker: within its queue, the job with the fewest tasks first."""

    name = "test_fewest_tasks"

    def __init__(self):
        super().__init__()
        self.jobs = {}
        self.cursor = []

    def on_queue_update(self, queue):
        pass

    def on_job_push(self, job):
        if job.state == "PEND":
            self.jobs[job.jobid] = job

    def on_job_state_change(self, job, new_state):
        if new_state == "PEND":
            self.jobs[job.jobid] = job
        else:
            self.jobs.pop(job.jobid, None)

    def on_job_update(self, job):
        pass

    def begin_session(self):
        self.cursor = sorted(self.jobs.values(), key=lambda j: (j.tasks, j.jobid))

    def next_job(self):
        while self.cursor:
            job = self.cursor.pop(0)
            if job.jobid in self.jobs:
                return job
        return None

    def end_session(self):
        pass

    def on_dispatch(self, jobid):
        self.jobs.pop(jobid, None)

    def on_pend(self, jobid):
        pass


def test_per_queue_picker_override():
    register(ShortestFirst.name, ShortestFirst)
    try:
        h = Harness(queues=[queue("first", 20), queue("sjf", 10, job_pick_plugin="test_fewest_tasks")])
        many_slots(h)
        h.submit(make_job(1).queue("sjf").tasks(8), make_job(2).queue("sjf").tasks(2),
                 make_job(3).queue("first").tasks(8), make_job(4).queue("first").tasks(2),
                 make_job(5).queue("sjf").tasks(4))
        # "first" (higher priority) keeps FCFS; "sjf" is delegated to the override.
        assert dispatched(h.round()) == [3, 4, 2, 5, 1]
    finally:
        unregister(ShortestFirst.name)


def test_state_change_removes_candidate_and_repend_returns_it():
    h = Harness()
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2), make_job(3))
    assert h.round() == [("DISPATCH", 1, (("h1", 1),)), ("PEND", 2, ("slots",)), ("PEND", 3, ("slots",))]
    h.state(2, "EXIT", "killed")  # killed while pending: no longer a candidate
    h.state(1, "PEND", "requeued")  # dispatch failed: back in line, in its original place
    # Job 1 comes first again; job 3 still waits for the same reason, so no new PEND for it.
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]
    assert h.core.jobs[3].state == "PEND"


def test_job_update_reorders():
    h = Harness()
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2), make_job(3))
    h.update(3, priority=10)
    assert h.round()[0] == ("DISPATCH", 3, (("h1", 1),))


def test_job_update_moves_between_queues():
    h = Harness(queues=[queue("a", 10), queue("b", 5)])
    many_slots(h)
    h.submit(make_job(1).queue("b"), make_job(2).queue("a"))
    h.update(1, queue="a")
    h.submit(make_job(3).queue("b"))
    assert dispatched(h.round()) == [1, 2, 3]


def test_closed_or_inactive_queue_is_skipped():
    h = Harness(queues=[queue("open"), queue("shut", status="closed"), queue("idle", active=False)])
    many_slots(h)
    h.submit(make_job(1).queue("shut"), make_job(2).queue("idle"), make_job(3).queue("open"))
    # The held jobs are told why, once (issue 24): "queue closed", "queue inactive".
    assert h.round() == [("DISPATCH", 3, (("h1", 1),)), ("PEND", 1, ("queue",)), ("PEND", 2, ("queue",))]
    assert h.round() == []
    h.queue_update(queue("idle", active=True))
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]


def test_max_running_per_queue_and_per_user():
    h = Harness(queues=[queue("q", max_running=2), queue("u", max_running_per_user=1)])
    many_slots(h)
    h.submit(make_job(1).queue("q"), make_job(2).queue("q"), make_job(3).queue("q"),
             make_job(4).queue("u").user("ann"), make_job(5).queue("u").user("ann"),
             make_job(6).queue("u").user("bob"))
    assert dispatched(h.round()) == [1, 2, 4, 6]
    assert dispatched(h.round()) == []
    h.state(1, "DONE")
    h.state(4, "DONE")
    assert dispatched(h.round()) == [3, 5]


def test_an_update_that_changes_nothing_does_not_offer_the_job_twice():
    h = Harness()
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2))
    h.update(2, priority=0)
    h.update(2, priority=0)
    assert h.round() == [("DISPATCH", 1, (("h1", 1),)), ("PEND", 2, ("slots",))]
