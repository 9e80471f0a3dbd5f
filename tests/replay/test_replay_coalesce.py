"""Usage ticks made redundant by a later tick of the same job are not pushed, and no decision changes."""

from __future__ import annotations

import io
from dataclasses import replace

from xce.core import SchedulerCore, events as ev
from xce.core.pickers import registry as pickers
from xce.core.pickers.fcfs import FcfsPicker
from xce.replay.writer import record
from xce.scheduler.coalesce import coalesce
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import closed_loop_events

G = 1024**3


def _rising(events):
    """The closed-loop stream with each job's usage never going down, as memory and CPU time do while a
    job grows: the ticks that coalescing may drop."""
    seen: dict[int, dict[str, int]] = {}
    out = []
    for e in events:
        if type(e) is ev.JobRusage:
            last = seen.get(e.jobid, {})
            usage = {k: max(v, last.get(k, 0)) for k, v in e.usage.items()}
            seen[e.jobid] = usage
            e = replace(e, usage=usage)
        out.append(e)
    return out


def _replay(path, coalesce_ticks):
    driver = SimDriver(path, verify=True, keep_decisions=True, out=io.StringIO(), err=io.StringIO(),
                       coalesce=coalesce_ticks)
    summary = driver.run()
    return summary, [(d.ts, d.key()) for d in driver.decisions]


def test_coalesced_replay_makes_the_recorded_decisions(tmp_path):
    events = _rising(closed_loop_events(11, njobs=1500, nhosts=16, usage_ticks=8))
    path = tmp_path / "rec.jsonl"
    recorded = record(events, path, seed=0, snapshot_interval=2000)
    with_c, decisions_c = _replay(path, True)
    without, decisions = _replay(path, False)
    assert with_c["usage_coalesced"] > 100  # the test exercises what it claims to
    assert without["usage_coalesced"] == 0 and with_c["events"] == without["events"]
    assert decisions_c == decisions == [(d.ts, d.key()) for d in recorded]
    assert with_c["verify"]["mismatches"] == without["verify"]["mismatches"] == 0


def _core_with_running_job():
    core = SchedulerCore(lambda d: None)
    core.push_event(ev.ConfigPush(ts=1, config=core.config))
    from xce.core.specs import HostSpec, JobSpec, QueueSpec, SchedConfig

    core.push_event(ev.ConfigPush(ts=1, config=SchedConfig(queues=(QueueSpec("normal"),))))
    core.push_event(ev.WorkersPush(ts=1, hosts=(HostSpec("h1", values={"slots": 4, "maxmem": 64 * G}),)))
    core.push_event(ev.JobsPush(ts=2, jobs=(JobSpec(jobid=1, user="u", queue="normal", request="rusage[mem=1G]"),
                                            JobSpec(jobid=2, user="u", queue="normal"))))
    core.push_event(ev.BeginRound(ts=3))
    core.push_event(ev.JobRusage(ts=4, jobid=1, usage={"memory_rss": 1 * G, "cpu_time": 1}))
    return core


def tick(ts, jobid, mem, cpu=5):
    return ev.JobRusage(ts=ts, jobid=jobid, usage={"memory_rss": mem, "cpu_time": cpu})


def test_only_rising_ticks_of_the_same_resources_are_dropped():
    core = _core_with_running_job()
    a, b, c = tick(5, 1, 2 * G), tick(5, 2, G), tick(6, 1, 3 * G)
    assert coalesce(core, [a, b, c]) == [b, c]
    down = tick(6, 1, G // 2)  # a release: the tick before it must stay
    assert coalesce(core, [a, down]) == [a, down]
    below_core = tick(5, 1, G // 2)  # lower than what the core has: a release itself
    assert coalesce(core, [below_core, c]) == [below_core, c]
    other_keys = ev.JobRusage(ts=6, jobid=1, usage={"memory_rss": 3 * G})
    assert coalesce(core, [a, other_keys]) == [a, other_keys]
    first_ever = [tick(5, 2, G), tick(6, 2, 2 * G)]  # job 2 never reported: nothing to compare with
    assert coalesce(core, first_ever) == first_ever
    chain = [tick(5, 1, 2 * G), tick(6, 1, 2 * G), tick(7, 1, 4 * G)]
    assert coalesce(core, chain) == chain[2:]


def test_a_picker_that_reads_usage_sees_every_tick():
    class Counting(FcfsPicker):
        name = "xt23_counting"

        def on_job_rusage(self, job, usage):
            pass

    pickers.register("xt23_counting", Counting)
    try:
        core = _core_with_running_job()
        core._replace_picker("xt23_counting")
        run = [tick(5, 1, 2 * G), tick(6, 1, 3 * G)]
        assert coalesce(core, run) == run
    finally:
        pickers.unregister("xt23_counting")


def test_pending_events_keep_their_order_around_coalesced_runs():
    from xce.scheduler.coalesce import coalesce_pending

    core = _core_with_running_job()
    a, c = tick(5, 1, 2 * G), tick(6, 1, 3 * G)
    state = ev.JobStateChange(ts=6, jobid=2, state="RUN")
    assert coalesce_pending(core, [a, c, state, a, state, a, c]) == [c, state, a, state, c]
