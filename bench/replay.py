"""Replay throughput and snapshot cost (Req 10): how fast a recording replays at speed 0, and what a
snapshot of a big core weighs and costs.

    python -m bench.replay            # one JSON line per figure

Figures:
  replay_read_lines_per_s       parsing and checking only (the reader's ceiling)
  replay_events_per_s           end to end at speed 0: read, push into the core, run the rounds
                                (a dispatch-heavy recording: every job is scheduled once)
  replay_events_per_s_telemetry the same with 8 usage reports per submission, as on a real cluster
  snapshot_*                    a core holding 100,000 jobs on 1,000 hosts
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time


def _row(figure: str, value: float, unit: str, **extra) -> dict:
    row = {"figure": figure, "value": round(value, 3), "unit": unit, **extra}
    print(json.dumps(row), flush=True)
    return row


def _replay(path: str, label: str, **extra) -> list[dict]:
    from xce.replay.reader import ReplayReader
    from xce.scheduler.sim_driver import SimDriver

    t = time.perf_counter()
    n = sum(1 for _ in ReplayReader(path))
    read_s = time.perf_counter() - t
    driver = SimDriver(path, out=io.StringIO(), err=io.StringIO())
    s = driver.run()
    rows = []
    if label == "replay_events_per_s":
        rows.append(_row("replay_read_lines_per_s", n / read_s, "lines/s", lines=n, seconds=round(read_s, 3)))
    rows.append(_row(label, s["events"] / s["wall_s"], "events/s", events=s["events"], rounds=s["rounds"],
                     decisions=sum(s["decisions"].values()), seconds=round(s["wall_s"], 3),
                     file_mb=round(os.path.getsize(path) / 2**20, 1), **extra))
    return rows


def replay_figures(tmp: str) -> list[dict]:
    from xce.replay.writer import record
    from xce.testing.scenarios import closed_loop_events

    rows = []
    for label, njobs, ticks in (("replay_events_per_s", 30_000, 0), ("replay_events_per_s_telemetry", 12_000, 8)):
        events = closed_loop_events(7, njobs=njobs, nhosts=200, usage_ticks=ticks)
        path = os.path.join(tmp, f"{label}.jsonl")
        t = time.perf_counter()
        record(events, path, seed=0, snapshot_interval=10_000)
        rec_s = time.perf_counter() - t
        rows += _replay(path, label, jobs=njobs, record_seconds=round(rec_s, 3))
    return rows


def snapshot_figures(tmp: str, njobs: int = 100_000, nhosts: int = 1_000) -> list[dict]:
    from xce.core import SchedulerCore
    from xce.core import events as ev
    from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, SchedConfig

    gib = 1024**3
    core = SchedulerCore(lambda d: None)
    core.push_event(ev.ConfigPush(ts=1, config=SchedConfig(
        queues=(QueueSpec("normal", priority=30), QueueSpec("batch", priority=10)), projects=(ProjectSpec("default"),))))
    core.push_event(ev.WorkersPush(ts=1, hosts=tuple(
        HostSpec(f"node{i:05d}", values={"slots": 64, "maxmem": 256 * gib}) for i in range(nhosts))))
    core.push_event(ev.ResvalsFull(ts=1, values={f"node{i:05d}": {"mem": 200 * gib} for i in range(nhosts)}))
    reqs = ("", "rusage[mem=1G]", "select[mem>4G] rusage[mem=2G]")
    jobs = []
    for j in range(1, njobs + 1):
        running = j % 2 == 0
        jobs.append(JobSpec(jobid=j, user=f"u{j % 50}", queue=("normal", "batch")[j % 2], queue_time=j,
                            request=reqs[j % 3], tasks=1, state="RUN" if running else "PEND",
                            placement=((f"node{j % nhosts:05d}", 1),) if running else ()))
    core.push_event(ev.JobsPush(ts=2, jobs=tuple(jobs)))
    path = os.path.join(tmp, "snap.json")
    t = time.perf_counter()
    with open(path, "w") as fp:
        core.save_snapshot(fp)
    save_s = time.perf_counter() - t
    size = os.path.getsize(path)
    fresh = SchedulerCore(lambda d: None)
    t = time.perf_counter()
    with open(path) as fp:
        fresh.load_snapshot(fp)
    load_s = time.perf_counter() - t
    assert len(fresh.jobs) == njobs
    return [
        _row("snapshot_bytes", size, "bytes", jobs=njobs, hosts=nhosts, mb=round(size / 2**20, 1)),
        _row("snapshot_save_s", save_s, "s", jobs=njobs, hosts=nhosts),
        _row("snapshot_load_s", load_s, "s", jobs=njobs, hosts=nhosts),
    ]


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="xce-bench-replay-") as tmp:
        return replay_figures(tmp) + snapshot_figures(tmp)


if __name__ == "__main__":
    run()
    sys.exit(0)
