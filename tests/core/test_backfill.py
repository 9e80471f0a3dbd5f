"""``strict_fcfs`` and ``easy_backfill`` through the core: head-of-line blocking, reservations
that hold, backfills refused because they would delay one, and host-aware reservations."""

from __future__ import annotations

from xce.testing import Harness, make_host, make_job, queue

NS = 1_000_000_000


def at(h: Harness, seconds: int) -> None:
    """The next event happens at ``seconds`` (the harness adds one second per event)."""
    h.ts = seconds * NS - NS


def dispatched(decisions):
    return [d[1] for d in decisions if d[0] == "DISPATCH"]


def reasons(h: Harness, jobid: int) -> list[str]:
    return [r.text for r in h.core.jobs[jobid].last_pend or ()]


def one_slot_hosts(n: int):
    return [make_host(f"h{i}") for i in range(n)]


def test_strict_fcfs_head_blocks_the_jobs_behind_it_but_a_broken_request_blocks_nothing():
    h = Harness(picker="strict_fcfs")
    h.hosts(*one_slot_hosts(4))
    h.submit(make_job(1).tasks(3))
    assert dispatched(h.round()) == [1]
    h.submit(make_job(2).request("select[[").tasks(1), make_job(3).tasks(2), make_job(4))
    out = h.round()
    assert dispatched(out) == []  # job 3 does not fit, so job 4 behind it waits too
    assert [d[1] for d in out if d[0] == "PEND"] == [2, 3, 4]
    h.state(1, "DONE")
    assert dispatched(h.round()) == [3, 4]


def test_builtin_fcfs_lets_the_wide_job_starve_where_easy_backfill_reserves():
    for picker, wide_starts in (("builtin_fcfs", False), ("easy_backfill", True)):
        h = Harness(picker=picker)
        h.hosts(*one_slot_hosts(4))
        at(h, 0)
        h.submit(make_job(1).limit(100), make_job(2).limit(100), make_job(3).limit(100))
        assert dispatched(h.round()) == [1, 2, 3]
        h.submit(make_job(10).tasks(4).limit(100), make_job(11).limit(500), make_job(12).limit(500))
        assert dispatched(h.round()) == ([] if wide_starts else [11])
        at(h, 100)
        for j in (1, 2, 3):
            h.state(j, "DONE")
        got = dispatched(h.round())
        assert got == ([10] if wide_starts else [12]), (picker, got)


def test_a_reservation_is_honoured_when_every_job_ends_by_its_limit():
    h = Harness(picker="easy_backfill")
    h.hosts(*one_slot_hosts(4))
    at(h, 0)
    h.submit(make_job(1).tasks(3).limit(100))
    assert dispatched(h.round()) == [1]
    at(h, 10)
    h.submit(make_job(2).tasks(4).limit(60), make_job(3).limit(50), make_job(4).limit(1000))
    out = h.round()
    assert dispatched(out) == [3]  # 10 + 50 <= 100: it ends before the reservation
    (r,) = h.core.picker.reservations
    assert (r.jobid, r.start, r.extra) == (2, h.core.jobs[1].start_time + 100 * NS, 0)
    assert reasons(h, 4) == ["would delay job 2, which holds a reservation"]
    assert reasons(h, 2)[-1] == ("holds a reservation: expected to start in 0:01:30 (when job 1 ends, by its run "
                                 "limit) on host(s) h0, h1, h2, h3")
    at(h, 60)
    h.state(3, "DONE")
    assert dispatched(h.round()) == []  # job 4 still may not run past t=100 on the reserved slot
    at(h, 100)
    h.state(1, "DONE")
    assert dispatched(h.round()) == [2]


def test_a_job_runs_past_the_shadow_time_only_on_the_extra_slots():
    h = Harness(picker="easy_backfill")
    h.hosts(*one_slot_hosts(6))
    at(h, 0)
    h.submit(make_job(1).tasks(4).limit(100))
    assert dispatched(h.round()) == [1]
    at(h, 1)
    # Job 2 needs 5: S = 100, X = 6 - 5 = 1. Job 3 may take the one extra slot, job 4 not any more.
    h.submit(make_job(2).tasks(5).limit(10), make_job(3).limit(1000), make_job(4).limit(1000))
    assert dispatched(h.round()) == [3]
    assert reasons(h, 4) == ["would delay job 2, which holds a reservation"]


def test_jobs_without_a_limit_count_as_running_for_the_queue_maximum():
    h = Harness(queues=[queue("normal", max_run_limit=200)], picker="easy_backfill")
    h.hosts(*one_slot_hosts(2))
    at(h, 0)
    h.submit(make_job(1))  # no limit: counts as 200 s
    assert dispatched(h.round()) == [1]
    h.submit(make_job(2).tasks(2).limit(10), make_job(3).limit(150), make_job(4).limit(300))
    assert dispatched(h.round()) == [3]
    assert h.core.picker.reservations[0].start == h.core.jobs[1].start_time + 200 * NS


def test_reservations_zero_is_plain_first_fit_and_backfill_depth_limits_the_jobs_tried():
    h = Harness(queues=[queue("normal", reservations=0)], picker="easy_backfill")
    h.hosts(*one_slot_hosts(2))
    h.submit(make_job(1).limit(100))
    h.round()
    h.submit(make_job(2).tasks(2).limit(10), make_job(3).limit(1000))
    assert dispatched(h.round()) == [3]

    h = Harness(queues=[queue("normal", backfill_depth=2)], picker="easy_backfill")
    h.hosts(*one_slot_hosts(4))
    h.submit(make_job(1).tasks(4).limit(100))
    h.round()
    h.submit(*[make_job(j).limit(10) for j in (2, 3, 4)])
    h.state(1, "DONE")
    assert dispatched(h.round()) == [2, 3]


def test_host_aware_reservation_holds_specific_hosts_and_their_leftover_can_be_backfilled():
    h = Harness(picker="easy_backfill")
    h.hosts(make_host("a").slots(8), make_host("b").slots(8))
    at(h, 0)
    h.submit(make_job(1).tasks(6).span("hosts=1").limit(100), make_job(2).tasks(6).span("hosts=1").limit(200))
    assert dispatched(h.round()) == [1, 2]
    assert h.core.jobs[1].placement == (("a", 6),) and h.core.jobs[2].placement == (("b", 6),)
    at(h, 1)
    # Job 3 wants 8 slots on one host: host a at t=100 (when job 1 ends). Two slots are free on a
    # now, but a long job there would leave a 2 short at t=100: job 4 must go to b instead.
    h.submit(make_job(3).tasks(8).span("hosts=1").limit(50), make_job(4).tasks(2).limit(1000),
             make_job(5).limit(1000), make_job(6).limit(20))
    out = h.round()
    (r,) = h.core.picker.reservations
    index = h.core.cluster.index
    assert r.start == h.core.jobs[1].start_time + 100 * NS and r.placement == {index["a"]: 8}
    assert dispatched(out) == [4, 6]
    assert h.core.jobs[4].placement == (("b", 2),)
    assert reasons(h, 5) == ["would delay job 3, which holds a reservation"]
    assert h.core.jobs[6].placement == (("a", 1),)  # ends by t=100: may use the reserved host


def test_what_a_reservation_leaves_on_its_host_can_be_backfilled():
    h = Harness(picker="easy_backfill")
    h.hosts(make_host("a").slots(8), make_host("b").slots(8))
    at(h, 0)
    h.submit(make_job(1).tasks(6).span("hosts=1").limit(100), make_job(2).tasks(8).span("hosts=1").limit(200))
    assert dispatched(h.round()) == [1, 2]
    at(h, 1)
    # Job 3 wants 4 on one host: a at t=100 leaves 4 there, so job 4 may keep running past it on a.
    h.submit(make_job(3).tasks(6).span("hosts=1").limit(50), make_job(4).tasks(2).limit(1000))
    out = h.round()
    assert h.core.picker.reservations[0].placement == {h.core.cluster.index["a"]: 6}
    assert dispatched(out) == [4] and h.core.jobs[4].placement == (("a", 2),)


def test_a_running_jobs_new_run_limit_moves_the_reservation_behind_it():
    h = Harness(picker="easy_backfill")
    h.hosts(*one_slot_hosts(2))
    at(h, 0)
    h.submit(make_job(1).limit(100))
    assert dispatched(h.round()) == [1]
    h.submit(make_job(2).tasks(2).limit(10), make_job(3).limit(60))
    assert dispatched(h.round()) == [3]  # ends at 60, before job 2's reservation at 100
    h.state(3, "DONE")
    h.update(1, run_limit=30)  # `xce modify -W` of the running job: it ends by 30 now
    h.submit(make_job(4).limit(60))
    assert dispatched(h.round()) == []
    assert h.core.picker.reservations[0].start == h.core.jobs[1].start_time + 30 * NS
    assert reasons(h, 4) == ["would delay job 2, which holds a reservation"]


def test_strict_fcfs_tells_the_jobs_behind_a_blocked_head_whom_they_wait_for():
    h = Harness(picker="strict_fcfs")
    h.hosts(*one_slot_hosts(4))
    h.submit(make_job(1).tasks(3))
    h.round()
    h.submit(make_job(2).tasks(2), make_job(3), make_job(4))
    h.round()
    behind = "waiting behind job 2, the head of queue normal (strict FCFS)"
    assert (reasons(h, 3), reasons(h, 4)) == ([behind], [behind])
    assert h.round() == []  # told once
    h.submit(make_job(5))
    assert h.round() == [("PEND", 5, ("fcfs",))]
    h.submit(make_job(0).priority(9).tasks(4))  # a new head: everyone behind it is told again
    assert [d[1] for d in h.round() if d[0] == "PEND"] == [0, 2, 3, 4, 5]
    assert reasons(h, 2) == ["waiting behind job 0, the head of queue normal (strict FCFS)"]


def test_strict_fcfs_tells_jobs_far_behind_the_head_once_without_naming_it():
    from xce.core.core import BEHIND_NAMED

    h = Harness(picker="strict_fcfs")
    h.hosts(*one_slot_hosts(2))
    h.submit(make_job(1).tasks(2), make_job(2).tasks(2), *(make_job(10 + i) for i in range(BEHIND_NAMED + 2)))
    h.round()
    last = 10 + BEHIND_NAMED + 1
    assert reasons(h, 10 + BEHIND_NAMED - 1) == ["waiting behind job 2, the head of queue normal (strict FCFS)"]
    far = [f"waiting behind the head of queue normal and at least {BEHIND_NAMED} jobs after it (strict FCFS)"]
    assert reasons(h, last) == far
    h.state(1, "DONE")
    out = h.round()  # job 2 starts and job 10 heads the queue: only the nearest are told again
    assert reasons(h, last) == far and not any(d[1] == last for d in out)
