"""Generated event streams: a small random cluster and workload that exercise every event type.

Used by the determinism and replay tests and by the benchmarks. The same seed always yields
the same stream.
"""

from __future__ import annotations

import random
from typing import Iterator

from xce.core import events as ev
from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, SchedConfig

GiB = 1024**3


def random_events(seed: int, njobs: int = 200, nhosts: int = 8, rounds_every: int = 5) -> list[ev.Event]:
    rng = random.Random(seed)
    out: list[ev.Event] = []
    ts = 1_000_000_000
    queues = (
        QueueSpec("urgent", priority=50, preemptible_queues=("batch",), preemptible=False),
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
