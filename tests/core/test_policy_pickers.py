"""The new backfilling pickers through the real core (``xce.testing.Harness``): what each changes
against ``easy_backfill`` shows in which job starts, and each keeps EASY's promise to the job
holding the reservation. Their start-for-start checks on whole traces are in
``tests/sim/test_policy_reference.py``."""

from __future__ import annotations

import pytest

from xce.core.pickers import registry
from xce.core.pickers.base import JobPicker
from xce.testing import Harness, make_host, make_job, queue

NS = 1_000_000_000
NEW = ("easy_backfill_shadow", "easy_sjbf", "easy_pp", "easy_aged_sjf")


def at(h: Harness, seconds: int) -> None:
    h.ts = seconds * NS - NS  # the harness adds one second per event


def dispatched(decisions):
    return [d[1] for d in decisions if d[0] == "DISPATCH"]


def hosts(n: int):
    return [make_host(f"h{i}") for i in range(n)]


@pytest.mark.parametrize("picker", NEW)
def test_each_is_registered_under_its_own_name_and_keeps_the_reservation(picker):
    assert picker in registry.available()
    made = registry.create(picker)
    assert isinstance(made, JobPicker) and made.name == picker
    # 4 slots: job 1 holds 3 until t=100; the wide job 2 gets the reservation; the long narrow
    # job 3 would delay it and is refused by every variant; job 2 starts at its reservation.
    h = Harness(picker=picker)
    h.hosts(*hosts(4))
    at(h, 0)
    h.submit(make_job(1).tasks(3).limit(100))
    assert dispatched(h.round()) == [1]
    at(h, 10)
    h.submit(make_job(2).tasks(4).limit(60), make_job(3).limit(1000))
    assert dispatched(h.round()) == []
    assert [r.jobid for r in h.core.picker.reservations] == [2]
    at(h, 100)
    h.state(1, "DONE")
    assert dispatched(h.round()) == [2]


@pytest.mark.parametrize("picker", NEW)
def test_each_serves_a_queue_as_its_own_picker_under_builtin_fcfs(picker):
    h = Harness(queues=[queue("normal", job_pick_plugin=picker)])
    assert h.core.picker._queues["normal"].delegate.name == picker
    h.hosts(*hosts(2))
    h.submit(make_job(1).limit(100), make_job(2).limit(100), make_job(3).limit(100))
    assert dispatched(h.round()) == [1, 2]


def _shadow_case(picker: str) -> list[int]:
    # 5 slots. Jobs 1 (2 slots), 5 and 6 (1 each) all end at t=100 by their limits; job 2 (4 slots)
    # is reserved at S=100. Job 3 (1 slot, runs past S) fits the one slot free at S only when the
    # extra counts job 6 too.
    h = Harness(picker=picker)
    h.hosts(*hosts(5))
    at(h, 0)
    h.submit(make_job(1).tasks(2).limit(100), make_job(5).limit(100), make_job(6).limit(100))
    assert dispatched(h.round()) == [1, 5, 6]
    at(h, 10)
    h.submit(make_job(2).tasks(4).limit(50))
    h.submit(make_job(3).limit(500))
    return dispatched(h.round())


def test_the_textbook_spare_count_lets_a_job_use_what_is_free_at_the_shadow_time():
    assert _shadow_case("easy_backfill") == []
    assert _shadow_case("easy_backfill_shadow") == [3]


def _two_candidates(picker: str) -> list[int]:
    h = Harness(picker=picker)
    h.hosts(*hosts(4))
    at(h, 0)
    h.submit(make_job(1).tasks(3).limit(100))
    h.round()
    at(h, 10)
    h.submit(make_job(2).tasks(4).limit(50), make_job(3).limit(60), make_job(4).limit(40))
    return dispatched(h.round())


def test_sjbf_gives_the_hole_to_the_shortest_candidate():
    assert _two_candidates("easy_backfill") == [3]
    assert _two_candidates("easy_sjbf") == [4]


def test_easy_pp_plans_with_the_users_last_two_run_times_but_kills_at_the_limit():
    h = Harness(picker="easy_pp")
    h.hosts(*hosts(4))
    at(h, 0)
    h.submit(make_job(1).user("ann").limit(1000), make_job(2).user("ann").limit(1000))
    assert dispatched(h.round()) == [1, 2]
    started = h.core.jobs[1].start_time
    at(h, 10)
    h.state(1, "DONE")
    at(h, 30)
    h.state(2, "DONE")
    runs = [10 * NS - started, 30 * NS - started]  # the actual run times, from the events' times
    assert h.core.picker.history == {"ann": runs}
    at(h, 40)
    h.submit(make_job(3).user("bob").tasks(3).limit(100))
    assert dispatched(h.round()) == [3]
    at(h, 50)
    # Job 5 asks for 1000 s, but ann's jobs ran about 20 s on average: predicted to end by S, when
    # job 3 reaches its limit, so it backfills; by its limit it would have delayed job 4.
    h.submit(make_job(4).user("bob").tasks(4).limit(100), make_job(5).user("ann").limit(1000))
    assert dispatched(h.round()) == [5]
    assert h.core.jobs[5].run_limit == 1000  # the kill stays at the requested time
    assert h.core.picker.save_state()["predicted"] == [[3, 100 * NS], [5, sum(runs) // 2]]


def test_the_aged_job_goes_first_even_when_shorter_ones_arrived():
    # 4 slots. Job 1 starts after a wait w1 of a second or so, the recent mean. Job 2 (2 of the 4
    # slots) is aged once it waited min(1 day, 8 x w1) x (1 - 2/4) = 4 x w1: it then goes ahead of
    # job 3, shorter but just come; without the bound, job 3 (all 4 slots) would start first.
    from xce.core.pickers.aged_sjf import AGE_FACTOR

    h = Harness(picker="easy_aged_sjf")
    h.hosts(*hosts(4))
    at(h, 0)
    h.submit(make_job(1).tasks(4).limit(20))
    assert dispatched(h.round()) == [1]
    at(h, 5)
    h.submit(make_job(2).tasks(2).limit(1000))
    assert dispatched(h.round()) == []
    at(h, 30)
    h.state(1, "DONE")
    h.submit(make_job(3).tasks(4).limit(5))
    w1 = h.core.picker.waits[0]
    assert w1 <= 2 * NS and AGE_FACTOR * w1 // 2 < 20 * NS
    assert dispatched(h.round()) == [2]
    assert [r.jobid for r in h.core.picker.reservations] == [3]
    job2 = h.core.jobs[2]
    assert h.core.picker.save_state()["waits"] == [w1, job2.start_time - job2.queue_time]
