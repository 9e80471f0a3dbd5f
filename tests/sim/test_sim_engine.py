"""The hand-made trace's schedule, worked out by hand (2 hosts x 2 slots, builtin_fcfs).

t=0    1 (2 tasks) and 2 (1 task) start; 1 slot left.
t=10   3 needs all 4 slots: waits.
t=20   4 (1 task) takes the last slot: builtin_fcfs tries every job in order, so a small job
       behind a blocked big one still starts (no reservation for 3).
t=50   2 and 4 end: 2 slots free, still not 4.
t=60   5 takes one of them; ends at 70.
t=100  1 ends: all 4 slots free, 3 starts; ends at 200.
t=110  6 waits (3 holds everything); so does 8 (t=130, 2 tasks from field 8).
t=200  3 ends: 6 and 8 start together. 9 (5 tasks) never fits a 4-slot cluster.
"""

from pathlib import Path

import pytest

from xce.sim import read_swf, simulate, uniform_cluster
from xce.sim.cluster_file import parse_cluster_text
from xce.sim.engine import NS
from xce.sim.swf import parse_lines

DATA = Path(__file__).parent / "data"


def test_hand_schedule():
    tr = read_swf(DATA / "hand.swf", skip_malformed=True)
    r = simulate(tr, uniform_cluster(2, 2))
    starts = {j: s for j, s in zip(tr.jobid, r.start)}
    ends = {j: e for j, e in zip(tr.jobid, r.end)}
    assert starts == {1: 0, 2: 0, 3: 100, 4: 20, 5: 60, 6: 200, 8: 200, 9: -1}
    assert ends == {1: 100, 2: 50, 3: 200, 4: 50, 5: 70, 6: 205, 8: 210, 9: -1}
    assert r.placement[tr.jobid.index(3)] == (("h001", 2), ("h002", 2))
    # 9 needs 5 processors on a 4-slot cluster: rejected up front, never sent to the core.
    assert [tr.jobid[i] for i in r.too_large] == [9] and r.never_started == []


def test_determinism():
    tr = read_swf(DATA / "hand.swf", skip_malformed=True)
    a, b = simulate(tr, uniform_cluster(2, 2)), simulate(tr, uniform_cluster(2, 2))
    assert (a.start, a.placement, a.rounds, a.events) == (b.start, b.placement, b.rounds, b.events)


PREEMPT = """
default_queue = "q1"
[queues.q0]
priority = 50
preemptible_queues = ["q1"]
preempt_policy = "queue_priority_first"
[queues.q1]
priority = 10
[[sim.hosts]]
name = "only"
slots = 1
"""


def test_preemption_suspends_and_resumes_with_the_remaining_run_time():
    # Job 1 (queue 1) runs 0..10, is suspended for job 2 (queue 0, 10..30), resumes with 90 s left.
    tr = parse_lines(["1 0 -1 100 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1",
                      "2 10 -1 20 1 -1 -1 1 -1 -1 1 2 1 -1 0 -1 -1 -1"])
    r = simulate(tr, parse_cluster_text(PREEMPT), queues_from_trace=True)
    assert r.queue_of == ["q1", "q0"]
    assert (r.start.tolist(), r.end.tolist(), r.preemptions.tolist()) == ([0, 10], [120, 30], [1, 0])


def test_memory_requests_only_on_a_cluster_with_memory():
    # 3 jobs of 1 task asking 600 MiB each on one 2-slot host with 1 GiB: only one fits at a time.
    lines = [f"{j} 0 -1 10 1 -1 500000 1 -1 614400 1 1 1 -1 0 -1 -1 -1" for j in (1, 2, 3)]
    tr = parse_lines(lines)
    assert simulate(tr, uniform_cluster(1, 2, 1024**3)).start.tolist() == [0, 10, 20]
    assert simulate(tr, uniform_cluster(1, 2)).start.tolist() == [0, 0, 10]


def test_core_sees_the_trace_times():
    from xce.core.specs import JobSpec
    from xce.sim.engine import job_queues, job_specs

    tr = read_swf(DATA / "hand.swf", skip_malformed=True)
    cl = uniform_cluster(2, 2)
    specs = job_specs(tr, cl, job_queues(tr, cl, False))
    assert isinstance(specs[0], JobSpec)
    assert [s.queue_time for s in specs][:3] == [0, 0, 10 * NS]
    assert {s.queue for s in specs} == {"normal"}


def test_queues_from_trace_get_priority_zero_when_undefined():
    tr = read_swf(DATA / "hand.swf", skip_malformed=True)
    r = simulate(tr, uniform_cluster(2, 2), queues_from_trace=True)
    assert set(r.queue_of) == {"q0", "q1"}
    assert {q.name: q.priority for q in r.cluster.config.queues}["q1"] == 0


def test_bad_cluster_file_names_the_key():
    from xce.config.loader import ConfigError

    with pytest.raises(ConfigError, match=r"sim.hosts\[0\].slots"):
        parse_cluster_text('[[sim.hosts]]\nname = "a"\nslots = 0\n')
    with pytest.raises(ConfigError, match="queues.normal.priorty"):
        parse_cluster_text('[queues.normal]\npriorty = 3\n[[sim.hosts]]\nname = "a"\n')


def test_every_pushed_event_goes_through_the_writer(monkeypatch):
    import sys
    import types

    seen: dict = {"events": [], "decisions": [], "closed": False}

    class FakeWriter:
        def __init__(self, target, core, snapshot_interval=0):
            seen["target"] = target

        def event(self, e):
            seen["events"].append(e.TYPE)

        def decision(self, d):
            seen["decisions"].append(d.OP)

        def close(self):
            seen["closed"] = True

    mod = types.ModuleType("xce.replay.writer")
    mod.ReplayWriter = FakeWriter
    monkeypatch.setitem(sys.modules, "xce.replay", types.ModuleType("xce.replay"))
    monkeypatch.setitem(sys.modules, "xce.replay.writer", mod)
    tr = read_swf(DATA / "preempt.swf")
    cluster = parse_cluster_text(PREEMPT.replace('name = "only"', 'prefix = "n"\ncount = 2') + 'mem = "1G"\n')
    r = simulate(tr, cluster, queues_from_trace=True, record="x.jsonl")
    assert seen["closed"] and seen["events"][:2] == ["CONFIG_PUSH", "WORKERS_PUSH"]
    assert len(seen["events"]) == r.events and len(seen["decisions"]) == r.decisions
    assert {"JOBS_PUSH", "BEGIN_ROUND", "JOB_STATE_CHANGE", "JOB_RUSAGE"} <= set(seen["events"])
    assert {"PREEMPT", "RESUME", "DISPATCH"} <= set(seen["decisions"])
