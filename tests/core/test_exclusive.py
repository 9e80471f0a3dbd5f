"""Exclusive jobs (``bsub -x``, ``sbatch --exclusive``) through the core: they start only on hosts
that run nothing, are charged every slot of their hosts so nothing else lands there (first fit,
backfilling, resumption), preemption takes whole hosts for them, and ``span[hosts=N]`` places
exactly N hosts (``sbatch -N``)."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from xce.core import SchedulerCore
from xce.core.specs import JobSpec
from xce.testing import Harness, make_host, make_job, queue

NS = 1_000_000_000


def at(h: Harness, seconds: int) -> None:
    h.ts = seconds * NS - NS


def texts(h: Harness, jobid: int) -> list[str]:
    return [r.text for r in h.core.jobs[jobid].last_pend or ()]


def running_on(core: SchedulerCore) -> dict[str, list[int]]:
    """host -> jobs holding slots there (running, resumed or unknown), by job id."""
    out: dict[str, list[int]] = {}
    for job in core.jobs.values():
        if job.slots_charged:
            for host, _ in job.placement:
                out.setdefault(host, []).append(job.jobid)
    return {h: sorted(j) for h, j in sorted(out.items())}


def assert_alone(core: SchedulerCore) -> None:
    for host, jobids in running_on(core).items():
        if any(core.jobs[j].exclusive for j in jobids):
            assert len(jobids) == 1, f"exclusive job shares host {host}: {jobids}"


def test_exclusive_job_takes_an_empty_host_whole_and_nothing_else_lands_there():
    h = Harness()
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(4))
    h.submit(make_job(1))
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]
    h.submit(make_job(2).exclusive())
    assert h.round() == [("DISPATCH", 2, (("h2", 1),))]  # h1 has three free slots but runs job 1
    assert h.inuse("h2", "slots") == 4  # charged the whole host, as Slurm charges --exclusive
    h.submit(make_job(3).tasks(4))
    out = h.round()
    assert out[0][:2] == ("PEND", 3)  # three slots free on h1 only; h2 is full
    h.submit(make_job(4).tasks(3))
    assert ("DISPATCH", 4, (("h1", 3),)) in h.round()
    h.state(2, "DONE")
    assert h.inuse("h2", "slots") == 0
    assert h.round() == [("DISPATCH", 3, (("h2", 4),))]


def test_two_exclusive_jobs_of_one_round_get_different_hosts_and_a_third_waits_saying_why():
    h = Harness()
    h.hosts(make_host("h1").slots(8), make_host("h2").slots(8))
    h.submit(make_job(1).exclusive(), make_job(2).exclusive(), make_job(3).exclusive())
    out = h.round()
    assert out[:2] == [("DISPATCH", 1, (("h1", 1),)), ("DISPATCH", 2, (("h2", 1),))]
    assert out[2] == ("PEND", 3, ("exclusive",))
    assert texts(h, 3) == ["exclusive job: each of the 2 available hosts it may use runs other jobs"]
    h.submit(make_job(4))
    assert h.round()[0] == ("PEND", 4, ("slots",))  # not even one slot beside an exclusive job
    h.state(1, "DONE")
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]  # job 4's reason is unchanged: not told again
    assert h.core.jobs[4].state == "PEND"


def test_the_unsatisfiable_cache_keeps_exclusive_and_shared_jobs_of_one_request_apart():
    h = Harness()
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1))
    h.round()
    h.submit(make_job(2).exclusive(), make_job(3))
    out = h.round()
    assert out == [("PEND", 2, ("exclusive",)), ("DISPATCH", 3, (("h1", 1),))]


def test_an_exclusive_parallel_job_spans_whole_hosts_and_its_compound_primaries_may_share_one():
    h = Harness()
    h.hosts(make_host("h1").slots(2), make_host("h2").slots(2), make_host("h3").slots(4))
    h.submit(make_job(1).tasks(3).exclusive())
    (d,) = h.round()
    assert d == ("DISPATCH", 1, (("h3", 3),))  # first fit of 3 tasks: the packed plan, on h3
    assert h.inuse("h3", "slots") == 4
    h.submit(make_job(2).request("1*{select[slots >= 2]} + 2*{select[slots >= 2]}").tasks(3).exclusive())
    (d,) = h.round()
    assert d[:2] == ("DISPATCH", 2) and sum(n for _, n in d[2]) == 3
    assert {h.inuse("h1", "slots"), h.inuse("h2", "slots")} == {2}


def test_a_suspended_job_does_not_block_an_exclusive_preemptor_and_is_not_resumed_beside_it():
    h = Harness(queues=[queue("low", 0), queue("high", 10, preemptible_queues=["low"], preempt_policy="queue_priority_first")])
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).queue("low"), make_job(2).queue("low"))
    h.round()
    h.submit(make_job(3).queue("high").exclusive())
    assert h.round() == [("PREEMPT", 3, (1, 2)), ("PEND", 3, ("preempt",))]  # every job on the host
    h.state(1, "SSUSP")
    h.state(2, "SSUSP")
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]
    assert h.inuse("h1", "slots") == 4
    assert h.round() == []  # three slots read free to the victims? no: the host is held whole
    h.state(3, "DONE")
    assert h.round() == [("RESUME", 1), ("RESUME", 2)]


def test_an_exclusive_preemptor_does_not_preempt_where_something_it_may_not_take_runs():
    h = Harness(queues=[queue("low", 0), queue("keep", 0, preemptible=False),
                        queue("high", 10, preemptible_queues=["low", "keep"], preempt_policy="queue_priority_first")])
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(4))
    h.submit(make_job(1).queue("keep"), make_job(2).queue("low").tasks(4))
    assert [d[0] for d in h.round()] == ["DISPATCH", "DISPATCH"]
    h.submit(make_job(3).queue("high").exclusive())
    # h1 runs a job of a queue that is not preemptible: only h2's job is suspended.
    assert h.round() == [("PREEMPT", 3, (2,)), ("PEND", 3, ("preempt",))]


def test_an_exclusive_victim_gives_back_its_whole_host_and_resumes_only_on_an_empty_one():
    h = Harness(queues=[queue("low", 0), queue("high", 10, preemptible_queues=["low"], preempt_policy="queue_priority_first")])
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).queue("low").exclusive())
    h.round()
    h.submit(make_job(2).queue("high").tasks(4))
    assert h.round() == [("PREEMPT", 2, (1,)), ("PEND", 2, ("preempt",))]
    h.state(1, "SSUSP")
    assert h.round() == [("DISPATCH", 2, (("h1", 4),))]
    h.submit(make_job(3).queue("low"))
    h.state(2, "DONE")
    out = h.round()
    assert out[0] == ("RESUME", 1)  # victims first, before the pending job 3
    assert out[1][:2] == ("PEND", 3)
    assert h.inuse("h1", "slots") == 4


def test_backfilling_reserves_a_whole_host_for_an_exclusive_job_and_keeps_others_off_it():
    h = Harness(picker="easy_backfill")
    h.hosts(make_host("h1").slots(2), make_host("h2").slots(2))
    at(h, 100)
    h.submit(make_job(1).limit(100), make_job(2).limit(1000), make_job(3).limit(1000))
    assert [d[0] for d in h.round()] == ["DISPATCH"] * 3  # 1 and 2 on h1, 3 on h2
    at(h, 110)
    h.submit(make_job(4).exclusive().limit(50), make_job(5).limit(500), make_job(6).limit(20))
    out = h.round()
    assert ("PEND", 4, ("exclusive", "reservation")) in out
    assert "on host(s) h1" in texts(h, 4)[-1] and "when job 2 ends" in texts(h, 4)[-1]
    # Job 5 would run past the reservation on h2's last free slot: allowed (h2 is not reserved);
    # job 6 ends before it starts anyway.
    assert ("DISPATCH", 5, (("h2", 1),)) in out
    assert ("PEND", 6, ("slots",)) in out


def test_an_exclusive_job_is_backfilled_only_when_it_cannot_delay_the_reservation():
    h = Harness(picker="easy_backfill")
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(4), make_host("h3").slots(4))
    at(h, 100)
    h.submit(make_job(1).tasks(4).limit(100), make_job(2).tasks(4).limit(300))
    h.round()
    # Job 3 needs two whole hosts: reserved on h1 (when job 1 ends) and h3, free now.
    h.submit(make_job(3).tasks(8).span("ptile=4").limit(100), make_job(4).exclusive().limit(1000),
             make_job(5).exclusive().limit(50))
    out = h.round()
    assert out[0] == ("PEND", 3, ("slots", "reservation"))
    assert "on host(s) h1, h3" in texts(h, 3)[-1]
    # A long exclusive job would take h3 whole past the reservation's start; a short one ends first.
    assert out[1] == ("PEND", 4, ("backfill",))
    assert texts(h, 4) == ["would delay job 3, which holds a reservation"]
    assert out[2] == ("DISPATCH", 5, (("h3", 1),))
    assert_alone(h.core)


def test_span_hosts_n_places_exactly_n_hosts_with_no_fill_plan():
    h = Harness()
    h.hosts(*(make_host(f"h{i}").slots(4) for i in range(4)))
    h.submit(make_job(1).tasks(6).span("hosts=3"))
    assert h.round() == [("DISPATCH", 1, (("h0", 2), ("h1", 2), ("h2", 2)))]
    h.submit(make_job(2).tasks(2).span("hosts=2"), make_job(3).tasks(3))
    out = h.round()
    assert out[0] == ("DISPATCH", 2, (("h0", 1), ("h1", 1)))
    assert out[1] == ("DISPATCH", 3, (("h3", 3),))
    # Free now: h0 1, h1 1, h2 2, h3 1. Four tasks on exactly two hosts (2 + 2) do not fit, and
    # spreading them over four hosts (what a fill plan would do) is not what span[hosts=2] means.
    h.submit(make_job(4).tasks(4).span("hosts=2"))
    assert h.round()[0][:2] == ("PEND", 4)


def test_exclusive_is_serialised_only_when_set_and_a_snapshot_keeps_the_claim():
    plain = make_job(1).spec()
    assert "exclusive" not in plain.to_json()
    spec = make_job(2).exclusive().spec()
    assert spec.to_json()["exclusive"] is True
    assert JobSpec.from_json(spec.to_json()) == spec
    h = Harness()
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(2))
    h.submit(make_job(1).exclusive(), make_job(2).tasks(2))
    h.round()
    buf = io.StringIO()
    h.core.save_snapshot(buf)
    data = json.loads(buf.getvalue())
    (ex,) = [j for j in data["jobs"] if j["jobid"] == 1]
    assert ex["exclusive"] is True and ex["claim"] == [["h1", 4]]
    assert "exclusive" not in [j for j in data["jobs"] if j["jobid"] == 2][0]
    other = SchedulerCore(lambda d: None)
    buf.seek(0)
    other.load_snapshot(buf)
    other.validate()
    assert other.cluster.inuse_table() == h.core.cluster.inuse_table() == {"h1": {"slots": 4}, "h2": {"slots": 2}}


def test_a_restarted_scheduler_charges_a_running_exclusive_job_its_whole_host_again():
    h = Harness()
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(4))
    h.submit(make_job(1).exclusive())
    from dataclasses import replace

    running = replace(make_job(7).exclusive().spec(), state="RUN", placement=(("h2", 1),), start_time=1)
    from xce.core import events as ev

    h.push(ev.JobsPush(ts=h._tick(), jobs=(running,)))
    assert h.inuse("h2", "slots") == 4
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]


# -- the property: never an exclusive job beside another running job ------------------------

OPS = st.lists(st.one_of(
    st.tuples(st.just("submit"), st.sampled_from(("low", "high")), st.integers(1, 4), st.booleans()),
    st.tuples(st.just("finish"), st.integers(0, 40)),
    st.tuples(st.just("round")),
), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), OPS, st.sampled_from(("builtin_fcfs", "easy_backfill")))
def test_no_host_ever_runs_an_exclusive_job_beside_another(slots, ops, picker):
    h = Harness(queues=[queue("low", 0, max_run_limit=100), queue("high", 10, preemptible_queues=["low"])],
                picker=picker)
    h.hosts(*(make_host(f"h{i}").slots(n) for i, n in enumerate(slots)))
    jid = 0
    for op in ops:
        if op[0] == "submit":
            jid += 1
            h.submit(make_job(jid).queue(op[1]).tasks(op[2]).exclusive(op[3]).limit(10 * op[2]))
            continue
        if op[0] == "finish":
            holding = sorted(j.jobid for j in h.core.jobs.values() if j.state in ("RUN", "SSUSP"))
            if holding:
                h.state(holding[op[1] % len(holding)], "DONE")
            continue
        for d in h.round_decisions():
            # The driver's side: a victim is suspended, a resumed job runs again.
            if d.OP == "PREEMPT":
                for v in d.victim_jobids:
                    h.state(v, "SSUSP")
            elif d.OP == "RESUME":
                h.state(d.jobid, "RUN")
        assert_alone(h.core)  # and the harness ran core.validate() after every event
