"""Jobs a round would only tell what they were already told are left out of it, and no decision
changes for it.

``builtin_fcfs`` leaves out a job the core knows fails as before (nothing released since it failed,
or fewer slots free than it needs); the EASY pickers leave out a job refused again for a reservation
it was already told of, and, once their reservations are made, a job that fails as before. Each is
compared, on random workloads, with the same picker made to offer every job.
"""

import random
from contextlib import contextmanager

from xce.core.pickers import register
from xce.core.pickers.easy_backfill import EasyBackfillPicker
from xce.core.pickers.fcfs import FcfsPicker
from xce.core.pickers.registry import unregister
from xce.core.specs import RUN
from xce.testing import Harness, make_host, make_job, queue


class OfferedFcfs(FcfsPicker):
    """``builtin_fcfs`` that records what it offers."""

    name = "test_offered_fcfs"
    offered: list[int] = []

    def next_job(self):
        job = super().next_job()
        if job is not None:
            self.offered.append(job.jobid)
        return job


class ListeningFcfs(OfferedFcfs):
    """Listens to ``on_pend``, so every job is offered to it."""

    name = "test_listening_fcfs"

    def on_pend(self, jobid):
        super().on_pend(jobid)


class EveryJobEasy(EasyBackfillPicker):
    """``easy_backfill`` that listens to ``on_pend``, so it is offered every job, as before jobs
    were left out."""

    name = "test_every_job_easy"

    heard: list[int] = []

    def on_pend(self, jobid):
        self.heard.append(jobid)
        super().on_pend(jobid)


@contextmanager
def registered(*classes):
    for cls in classes:
        register(cls.name, cls)
    try:
        yield
    finally:
        for cls in classes:
            unregister(cls.name)


def test_builtin_fcfs_leaves_out_jobs_that_fail_as_before_until_something_is_released():
    with registered(OfferedFcfs):
        OfferedFcfs.offered = offered = []
        h = Harness(picker=OfferedFcfs.name)
        h.hosts(make_host("h1").slots(2))
        h.submit(make_job(1).tasks(2), make_job(2).tasks(1), make_job(3).tasks(2))
        assert h.round() == [("DISPATCH", 1, (("h1", 2),)), ("PEND", 2, ("slots",)), ("PEND", 3, ("slots",))]
        assert offered == [1, 2, 3]
        offered.clear()
        h.submit(make_job(4).tasks(1))
        assert h.round() == [("PEND", 4, ("slots",))]  # only the newcomer is tried: nothing was released
        assert offered == [4]
        offered.clear()
        h.state(1, "DONE")
        assert h.round() == [("DISPATCH", 2, (("h1", 1),)), ("DISPATCH", 4, (("h1", 1),))]
        assert offered == [2, 4]  # job 3 needs 2 slots and none is free once job 2 started
        offered.clear()
        h.state(2, "DONE")
        assert h.round() == []  # one slot free, job 3 still cannot start and was told so
        assert offered == []
        h.state(4, "DONE")
        assert h.round() == [("DISPATCH", 3, (("h1", 2),))]
        assert offered == [3]


def test_a_picker_that_listens_to_on_pend_is_offered_every_job():
    with registered(ListeningFcfs):
        ListeningFcfs.offered = offered = []
        h = Harness(picker=ListeningFcfs.name)
        h.hosts(make_host("h1").slots(1))
        h.submit(make_job(1), make_job(2), make_job(3))
        h.round()
        offered.clear()
        assert h.round() == []
        assert offered == [2, 3]


def test_easy_leaves_out_a_job_refused_again_and_still_tells_a_new_refusal():
    h = Harness(picker="easy_backfill")
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).tasks(3).limit(100), make_job(2).tasks(4).limit(100), make_job(3).tasks(1).limit(500))
    first = h.round_decisions()
    assert [d.jobid for d in first] == [1, 2, 3]
    assert "would delay job 2" in first[2].reasons[0].text
    h.submit(make_job(4).tasks(1).limit(500))
    again = h.round_decisions()
    # Job 3 is refused as it was told: nothing about it; job 4 is told for the first time.
    assert [(d.jobid, d.reasons[0].text) for d in again] == [(4, "would delay job 2, which holds a reservation")]


def test_an_easy_picker_that_listens_to_on_pend_hears_every_job():
    with registered(EveryJobEasy):
        EveryJobEasy.heard = heard = []
        h = Harness(picker=EveryJobEasy.name)
        h.hosts(make_host("h1").slots(4))
        h.submit(make_job(1).tasks(3).limit(100), make_job(2).tasks(4).limit(100), make_job(3).tasks(1).limit(500))
        h.round()
        heard.clear()
        assert h.round() == []
        assert heard == [2, 3]  # the reserved job, and the one refused again as it was told


def _drive(picker: str, seed: int) -> list:
    """A random workload through ``picker``; every decision, as the core emitted it."""
    rng = random.Random(seed)
    h = Harness(queues=[queue("normal", reservations=rng.choice([1, 1, 2]))], picker=picker)
    h.hosts(*(make_host(f"h{i}").slots(rng.randint(1, 4)) for i in range(rng.randint(2, 5))))
    jobid = 0
    for _ in range(40):
        r = rng.random()
        if r < 0.45:
            batch = []
            for _ in range(rng.randint(1, 3)):
                jobid += 1
                b = make_job(jobid).tasks(rng.randint(1, 6)).limit(rng.choice([10, 50, 200, 1000]))
                if rng.random() < 0.2:
                    b = b.priority(rng.randint(1, 3))
                if rng.random() < 0.15:
                    b = b.request("span[hosts=1]").tasks(rng.randint(1, 3))
                if rng.random() < 0.1:
                    b = b.exclusive()
                batch.append(b)
            h.submit(*batch)
        elif r < 0.75:
            running = sorted(j for j, job in h.core.jobs.items() if job.state == RUN)
            if running:
                h.state(rng.choice(running), "DONE")
        h.round()
    return h.recorder.decisions


def test_leaving_jobs_out_changes_no_decision():
    with registered(ListeningFcfs, EveryJobEasy):
        for seed in range(60):
            assert _drive("builtin_fcfs", seed) == _drive(ListeningFcfs.name, seed), f"builtin_fcfs, seed {seed}"
            assert _drive("easy_backfill", seed) == _drive(EveryJobEasy.name, seed), f"easy_backfill, seed {seed}"
