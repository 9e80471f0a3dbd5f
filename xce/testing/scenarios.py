"""Generated event streams: a small random cluster and workload that exercise every event type.

Used by the determinism and replay tests and by the benchmarks. The same seed always yields
the same stream.
"""

from __future__ import annotations

import random
from typing import Iterator

from xce.core import SchedulerCore, events as ev
from xce.core.decisions import Decision
from xce.core.events import Event
from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, SchedConfig

GiB = 1024**3


def random_events(seed: int, njobs: int = 200, nhosts: int = 8, rounds_every: int = 5) -> list[ev.Event]:
    rng = random.Random(seed)
    out: list[ev.Event] = []
    ts = 1_000_000_000
    queues = (
        QueueSpec("urgent", priority=50, preemptible_queues=("batch",), preemptible=False,
                  preempt_policy="queue_priority_first"),
        QueueSpec("normal", priority=30, max_running_per_user=6),
        QueueSpec("batch", priority=10),
    )
    out.append(ev.ConfigPush(ts=ts, config=SchedConfig(queues=queues, projects=(ProjectSpec("default"),))))
    hosts = tuple(HostSpec(f"node{i:03d}", values={"slots": rng.choice((2, 4, 8)), "maxmem": 32 * GiB,
                                                   "type": rng.choice(("X86_64", "ARM64"))})
                  for i in range(nhosts))
    out.append(ev.WorkersPush(ts=ts, hosts=hosts))
    out.append(ev.ResvalsFull(ts=ts, values={h.name: {"mem": rng.choice((8, 16, 32)) * GiB} for h in hosts}))
    users = ("ann", "bob", "cyd", "dee")
    running: list[int] = []
    pending: list[int] = []
    for jobid in range(1, njobs + 1):
        ts += rng.randint(1, 5) * 1_000_000_000
        q = rng.choices(("urgent", "normal", "batch"), weights=(1, 4, 5))[0]
        req = rng.choice(("", "rusage[mem=1G]", "select[type==\"X86_64\"]", "rusage[mem=2G] span[hosts=1]",
                          "select[mem>4G] order[-mem]", "{rusage[mem=512M]} || {select[type==\"ARM64\"]}"))
        spec = JobSpec(jobid=jobid, user=rng.choice(users), queue=q, priority=rng.randint(0, 3), queue_time=ts,
                       request=req, tasks=rng.choice((1, 1, 1, 2, 3, 4, 6)))
        out.append(ev.JobsPush(ts=ts, jobs=(spec,)))
        pending.append(jobid)
        r = rng.random()
        if running and r < 0.3:
            done = running.pop(rng.randrange(len(running)))
            out.append(ev.JobStateChange(ts=ts, jobid=done, state=rng.choice(("DONE", "DONE", "EXIT"))))
        elif running and r < 0.4:
            out.append(ev.JobRusage(ts=ts, jobid=rng.choice(running),
                                    usage={"memory_rss": rng.randint(0, 4) * GiB, "cpu_time": rng.randint(0, 99)}))
        elif pending and r < 0.45:
            out.append(ev.JobUpdate(ts=ts, jobid=rng.choice(pending), priority=rng.randint(0, 9)))
        elif r < 0.5:
            h = rng.choice(hosts)
            out.append(ev.ResvalsDelta(ts=ts, values={h.name: {"mem": rng.choice((4, 8, 16, 32)) * GiB}}))
        if jobid % rounds_every == 0:
            out.append(ev.BeginRound(ts=ts))
            # A driver would learn outcomes from the controller; here dispatched ids are guessed
            # from the stream itself by the test that needs them. Keep the stream self-contained:
            running.extend(pending[:2])
            pending = pending[2:]
    ts += 1_000_000_000
    out.append(ev.BeginRound(ts=ts))
    return out


def iter_json_lines(events: list[ev.Event]) -> Iterator[dict]:
    for e in events:
        yield e.to_json()


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
    queues = (QueueSpec("urgent", priority=50, preemptible_queues=("batch",), preemptible=False,
                        preempt_policy="queue_priority_first"),
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
