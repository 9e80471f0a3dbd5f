"""Replay throughput and snapshot cost (Req 10): how fast a recording replays at speed 0, and what a
snapshot of a big core weighs and costs.

    python -m bench.replay            # one JSON line per figure
    python -m bench.replay whole      # only the whole-process figures on ~1M-event recordings

Figures:
  replay_read_lines_per_s       parsing and checking only (the reader's ceiling)
  replay_events_per_s           end to end at speed 0: read, push into the core, run the rounds
                                (a dispatch-heavy recording: every job is scheduled once)
  replay_events_per_s_telemetry the same with 8 usage reports per submission, as on a real cluster
  snapshot_*                    a core holding 100,000 jobs on 1,000 hosts
  replay_whole_process_*        `xce scheduler --sim FILE --sim-verify` as a process, on a recording of
                                ~1.1M events (90,000 jobs, 8 usage ticks per submission, kept in
                                bench/out/) and on one without usage ticks (30,000 jobs)
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
    from xce.core import SchedulerCore, events as ev
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


def recording(path: str, njobs: int, ticks: int, nhosts: int = 200) -> str:
    """A closed-loop recording (made once, then kept at ``path``: generating 1M events takes a minute)."""
    from xce.replay.writer import record
    from xce.testing.scenarios import closed_loop_events

    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        record(closed_loop_events(7, njobs=njobs, nhosts=nhosts, usage_ticks=ticks), path + ".tmp", seed=0,
               snapshot_interval=10_000)
        os.replace(path + ".tmp", path)
    return path


def whole_process(repeats: int = 3) -> list[dict]:
    """``xce scheduler --sim FILE --sim-verify`` as a whole process (interpreter start, imports, reading,
    verifying) on recordings of about a million events: events in the file / wall time."""
    import statistics
    import subprocess

    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
    rows = []
    for label, njobs, ticks in (("telemetry_1m", 90_000, 8), ("dispatch_only", 30_000, 0)):
        path = recording(os.path.join(out_dir, f"replay-{label}-{njobs}-{ticks}.jsonl"), njobs, ticks)
        xce = os.path.join(os.path.dirname(sys.executable), "xce")
        walls, summary = [], {}
        for _ in range(repeats):
            t = time.perf_counter()
            p = subprocess.run([xce, "scheduler", "--sim", path, "--sim-verify", "--json"], capture_output=True,
                               text=True, timeout=1800)
            walls.append(time.perf_counter() - t)
            if p.returncode != 0:
                raise RuntimeError(f"replay of {path} failed: {p.stderr[-2000:]}")
            summary = json.loads(p.stdout)
        wall = statistics.median(walls)
        rows.append(_row("replay_whole_process_events_per_s", summary["events"] / wall, "events/s",
                         recording=label, events=summary["events"], rounds=summary["rounds"],
                         decisions=sum(summary["decisions"].values()), mismatches=summary["verify"]["mismatches"],
                         usage_coalesced=summary["usage_coalesced"], wall_s=[round(w, 2) for w in walls],
                         file_mb=round(os.path.getsize(path) / 2**20, 1), target=100_000,
                         met=summary["events"] / wall >= 100_000, load1=round(os.getloadavg()[0], 2)))
    return rows


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="xce-bench-replay-") as tmp:
        return replay_figures(tmp) + snapshot_figures(tmp) + whole_process()


if __name__ == "__main__":
    if sys.argv[1:] == ["whole"]:
        whole_process()
    else:
        run()
    sys.exit(0)
