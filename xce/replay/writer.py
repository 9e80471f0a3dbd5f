"""Recording: what ``xceadmin scheduler record start`` does (Req 10 AC 9-10).

The writer sits on both sides of the core: the driver hands it each input event *before* pushing
it, and routes the core's decisions through it. It never touches the core except to read a
snapshot between rounds, so recording cannot change a decision.

Periodic snapshots are cut only at a time boundary (the next event's ts is later than the last
one's): then every event before a SNAPSHOT has ``ts <= snapshot.ts`` and every event after it has
``ts > snapshot.ts``, which is what makes "start at TS" and what-if event files unambiguous.
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, Iterable

from xce.core import SchedulerCore
from xce.core.decisions import Decision
from xce.core.events import Event
from xce.replay import format as fmt


class ReplayWriter:
    def __init__(self, fp_or_path: str | os.PathLike | IO[str], core: SchedulerCore,
                 snapshot_interval: int = 0, *, start_ts: int | None = None) -> None:
        if snapshot_interval < 0:
            raise ValueError(f"snapshot_interval must be >= 0 (0 = initial snapshot only), got {snapshot_interval}")
        if isinstance(fp_or_path, (str, os.PathLike)):
            self._fp: IO[str] = open(fp_or_path, "w", encoding="utf-8", buffering=1 << 20)
            self._owns = True
        else:
            self._fp = fp_or_path
            self._owns = False
        self.core = core
        self.snapshot_interval = snapshot_interval
        self.events = 0
        self.decisions = 0
        self.snapshots = 0
        self._since = 0
        # The clock's anchor is the ts of the last event the driver pushed (both drivers set it per
        # event), unlike now(), which in normal mode runs ahead of events still to be delivered.
        start = core.clock.params.virtual_base if start_ts is None else int(start_ts)
        self._last_ts = start
        self._write(fmt.header(core.config.to_json(), start))
        self._snapshot(start)

    def _write(self, obj: dict[str, Any]) -> None:
        self._fp.write(fmt.line(obj))

    def _snapshot(self, ts: int) -> None:
        self._write(fmt.snapshot(ts, self.core.snapshot()))
        self.snapshots += 1
        self._since = 0

    def event(self, e: Event) -> None:
        """Call before ``core.push_event(e)``: a due snapshot must show the state before ``e``."""
        if e.ts < self._last_ts:
            raise ValueError(f"event ts went backwards: {e.TYPE} at {e.ts} after {self._last_ts}")
        if self.snapshot_interval and self._since >= self.snapshot_interval and e.ts > self._last_ts:
            self._snapshot(self._last_ts)
        self._write(e.to_json())
        self._last_ts = e.ts
        self.events += 1
        self._since += 1

    def decision(self, d: Decision) -> None:
        self._write(fmt.decision(d.ts, d.to_json()))
        self.decisions += 1

    __call__ = decision

    def close(self) -> None:
        if self._fp.closed:
            return
        self._fp.flush()
        if self._owns:
            self._fp.close()

    def __enter__(self) -> "ReplayWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def record(events: Iterable[Event], path: str | os.PathLike | IO[str], seed: int = 0,
           snapshot_interval: int = 0) -> list[Decision]:
    """Run a fresh core over ``events`` while recording; returns the decisions it made.

    The recording starts 1 ns before the first event so that the initial snapshot, like every
    other, precedes all events after it in time as well as in the file.
    """
    events = list(events)
    decisions: list[Decision] = []
    writer: ReplayWriter | None = None

    def sink(d: Decision) -> None:
        decisions.append(d)
        writer.decision(d)  # type: ignore[union-attr]

    core = SchedulerCore(sink, seed=seed)
    core.clock.freeze_at(max(events[0].ts - 1, 0) if events else 0)
    writer = ReplayWriter(path, core, snapshot_interval)
    try:
        for e in events:
            writer.event(e)
            core.clock.freeze_at(e.ts)
            core.push_event(e)
    finally:
        writer.close()
    return decisions


def record_to_string(events: Iterable[Event], seed: int = 0, snapshot_interval: int = 0) -> str:
    buf = io.StringIO()
    record(events, buf, seed=seed, snapshot_interval=snapshot_interval)
    return buf.getvalue()


__all__ = ["ReplayWriter", "record", "record_to_string"]


def closed_loop_events(seed: int, njobs: int, nhosts: int = 64, round_every: int = 10,
                       usage_ticks: int = 0) -> list[Event]:
    """A synthetic stream in which the controller reacts to the core (jobs start, finish, get
    suspended), as in a real recording.

    ``xce.testing.scenarios.random_events`` guesses outcomes, so at 10,000 jobs its pending list
    (and every round's PEND output) grows without bound; a recording of a long-running cluster
    must not. ``usage_ticks`` adds that many JOB_RUSAGE reports per submission, the telemetry that
    dominates a real recording. Same seed, same stream.
    """
    import heapq
    import random

    from xce.core import events as ev
    from xce.core.decisions import Dispatch, Preempt, Resume
    from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, SchedConfig

    gib = 1024**3
    rng = random.Random(seed)
    out: list[Event] = []
    made: list[Decision] = []
    core = SchedulerCore(made.append, seed=seed)

    def emit(e: Event) -> None:
        out.append(e)
        core.clock.freeze_at(e.ts)
        core.push_event(e)

    ts = 1_000_000_000
    queues = (QueueSpec("urgent", priority=50, preemptible_queues=("batch",), preemptible=False),
              QueueSpec("normal", priority=30, max_running_per_user=40), QueueSpec("batch", priority=10))
    emit(ev.ConfigPush(ts=ts, config=SchedConfig(queues=queues, projects=(ProjectSpec("default"),))))
    hosts = tuple(HostSpec(f"node{i:04d}", values={"slots": rng.choice((4, 8, 16)), "maxmem": 64 * gib,
                                                   "type": rng.choice(("X86_64", "ARM64"))}) for i in range(nhosts))
    emit(ev.WorkersPush(ts=ts, hosts=hosts))
    emit(ev.ResvalsFull(ts=ts, values={h.name: {"mem": rng.choice((32, 48, 64)) * gib} for h in hosts}))
    capacity = sum(h.values["slots"] for h in hosts)
    mean_tasks, gap_s = 2.5, 0.5
    mean_run_s = 0.85 * capacity * gap_s / mean_tasks  # about 85% busy
    ends: list[tuple[int, int]] = []
    state: dict[int, str] = {}
    runtime: dict[int, int] = {}
    users = tuple(f"u{i}" for i in range(12))
    seen = 0

    def react() -> None:
        nonlocal seen
        for d in made[seen:]:
            if type(d) is Dispatch:
                state[d.jobid] = "RUN"
                heapq.heappush(ends, (d.ts + runtime[d.jobid], d.jobid))
                emit(ev.JobStateChange(ts=d.ts, jobid=d.jobid, state="RUN"))
            elif type(d) is Preempt:
                for v in d.victim_jobids:
                    state[v] = "SSUSP"
                    emit(ev.JobStateChange(ts=d.ts, jobid=v, state="SSUSP"))
            elif type(d) is Resume:
                state[d.jobid] = "RUN"
                emit(ev.JobStateChange(ts=d.ts, jobid=d.jobid, state="RUN"))
        seen = len(made)

    def finish_until(now: int) -> None:
        while ends and ends[0][0] <= now:
            end, jobid = heapq.heappop(ends)
            if state.get(jobid) == "SSUSP":  # suspended time does not count
                heapq.heappush(ends, (now + runtime[jobid], jobid))
                continue
            if state.pop(jobid, None) == "RUN":
                emit(ev.JobStateChange(ts=max(end, out[-1].ts), jobid=jobid, state=rng.choice(("DONE", "DONE", "EXIT"))))

    requests = ("", "rusage[mem=1G]", "select[type==\"X86_64\"]", "rusage[mem=2G] span[hosts=1]",
                "select[mem>4G] order[-mem]", "{rusage[mem=512M]} || {select[type==\"ARM64\"]}")
    for jobid in range(1, njobs + 1):
        ts += int(rng.expovariate(1 / gap_s) * 1e9) + 1
        finish_until(ts)
        q = rng.choices(("urgent", "normal", "batch"), weights=(1, 4, 5))[0]
        tasks = rng.choice((1, 1, 2, 2, 3, 4, 5))
        runtime[jobid] = int(rng.uniform(0.2, 1.8) * mean_run_s * 1e9)
        emit(ev.JobsPush(ts=ts, jobs=(JobSpec(jobid=jobid, user=rng.choice(users), queue=q,
                                              priority=rng.randint(0, 3), queue_time=ts,
                                              request=rng.choice(requests), tasks=tasks),)))
        state[jobid] = "PEND"
        r = rng.random()
        running = [j for j, s in state.items() if s == "RUN"] if (r < 0.25 or usage_ticks) else ()
        for jid in (rng.choice(running) for _ in range(usage_ticks if running else 0)):
            emit(ev.JobRusage(ts=ts, jobid=jid, usage={"memory_rss": rng.randint(0, 2) * gib,
                                                       "cpu_time": rng.randint(0, 99)}))
        if running and r < 0.2:
            emit(ev.JobRusage(ts=ts, jobid=rng.choice(running),
                              usage={"memory_rss": rng.randint(0, 2) * gib, "cpu_time": rng.randint(0, 99)}))
        elif r < 0.25:
            h = rng.choice(hosts)
            emit(ev.ResvalsDelta(ts=ts, values={h.name: {"mem": rng.choice((32, 48, 64)) * gib}}))
        if jobid % round_every == 0:
            emit(ev.BeginRound(ts=ts))
            react()
    while ends or any(s == "PEND" for s in state.values()):
        ts += 5_000_000_000
        finish_until(ts)
        emit(ev.BeginRound(ts=ts))
        react()
        if not ends and all(s != "RUN" for s in state.values()):
            break
    return out
