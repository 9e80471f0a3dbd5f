"""Scheduling rounds on the pure core: hosts H x pending jobs P x job mix.

Each configuration runs in its own process so its peak memory (ru_maxrss) is its own. One round
over P pending jobs is timed; dispatch and pend decisions per second are measured in that round.

    python -m bench.rounds            # the full grid
    python -m bench.rounds 5000 100000 single
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import subprocess
import sys
import time

HOSTS = (100, 1_000, 5_000)
PENDING = (1_000, 10_000, 100_000)
MIXES = ("single", "parallel20", "unsat50")
SLOTS_PER_HOST = 8


def build_jobs(mix: str, n: int, rng: random.Random):
    from xce.core.specs import JobSpec

    jobs = []
    for i in range(1, n + 1):
        tasks, request = 1, "rusage[mem=1G]" if i % 2 else ""
        if mix == "parallel20" and rng.random() < 0.2:
            tasks = rng.randint(2, 64)
        elif mix == "unsat50" and i % 2 == 0:
            request = "rusage[mem=1T]"  # no host has a terabyte: proven once, then cached
        jobs.append(JobSpec(jobid=i, user=f"u{i % 50}", queue="normal", queue_time=i, request=request, tasks=tasks))
    return jobs


def measure(nhosts: int, npending: int, mix: str) -> dict:
    from xce.core import SchedulerCore, events as ev
    from xce.core.specs import HostSpec, QueueSpec, SchedConfig

    decisions: list = []
    core = SchedulerCore(decisions.append, seed=1)
    core.push_event(ev.ConfigPush(ts=1, config=SchedConfig(queues=(QueueSpec("normal"),))))
    core.push_event(ev.WorkersPush(ts=1, hosts=tuple(
        HostSpec(f"h{i:05d}", values={"slots": SLOTS_PER_HOST, "mem": 64 << 30}) for i in range(nhosts))))
    jobs = build_jobs(mix, npending, random.Random(7))
    t0 = time.perf_counter()
    core.push_event(ev.JobsPush(ts=2, jobs=tuple(jobs)))
    t1 = time.perf_counter()
    c1 = time.process_time()
    core.push_event(ev.BeginRound(ts=3))
    t2 = time.perf_counter()
    cpu_s = time.process_time() - c1
    round_s = t2 - t1
    counts = {"DISPATCH": 0, "PEND": 0}
    for d in decisions:
        counts[d.OP] = counts.get(d.OP, 0) + 1
    return {
        "figure": "scheduling_round", "hosts": nhosts, "pending": npending, "mix": mix,
        "round_s": round(round_s, 4), "round_cpu_s": round(cpu_s, 4), "push_s": round(t1 - t0, 4),
        # The round's decisions, hashed: compare it between two versions to know they decide alike.
        "digest": decision_digest(decisions),
        "dispatched": counts["DISPATCH"], "pended": counts["PEND"],
        "decisions_per_s": round((counts["DISPATCH"] + counts["PEND"]) / round_s),
        "dispatch_per_s": round(counts["DISPATCH"] / round_s),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def decision_digest(decisions) -> str:
    """sha256 of the decisions' JSON forms, one sorted-key line each, in order (first 16 hex digits)."""
    h = hashlib.sha256()
    for d in decisions:
        h.update(json.dumps(d.to_json(), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def run(grid=None) -> list[dict]:
    rows = []
    for nhosts, npending, mix in grid or [(h, p, m) for m in MIXES for h in HOSTS for p in PENDING]:
        out = subprocess.run([sys.executable, "-m", "bench.rounds", str(nhosts), str(npending), mix],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def pend_rate_with_cache(nhosts: int = 5_000, npending: int = 100_000) -> dict:
    """Pend decisions per second when the unsatisfiable cache answers: every slot is taken, so the
    first job of each request shape proves it unsatisfiable and every later one is a cache hit."""
    from xce.core import SchedulerCore, events as ev
    from xce.core.specs import HostSpec, JobSpec, QueueSpec, SchedConfig

    pended = [0]

    def sink(d):
        pended[0] += d.OP == "PEND"

    core = SchedulerCore(sink, seed=1)
    core.push_event(ev.ConfigPush(ts=1, config=SchedConfig(queues=(QueueSpec("normal"),))))
    core.push_event(ev.WorkersPush(ts=1, hosts=tuple(
        HostSpec(f"h{i:05d}", values={"slots": 1}) for i in range(nhosts))))
    core.push_event(ev.JobsPush(ts=2, jobs=tuple(
        JobSpec(jobid=i, user="u", queue="normal", queue_time=i) for i in range(1, nhosts + 1))))
    core.push_event(ev.BeginRound(ts=3))
    core.push_event(ev.JobsPush(ts=4, jobs=tuple(
        JobSpec(jobid=nhosts + i, user="u", queue="normal", queue_time=nhosts + i,
                request=("", "rusage[mem=1G]", "span[hosts=1]")[i % 3], tasks=1 + i % 2)
        for i in range(1, npending + 1))))
    pended[0] = 0
    t0 = time.perf_counter()
    core.push_event(ev.BeginRound(ts=5))
    dt = time.perf_counter() - t0
    return {"figure": "pend_rate_cache", "hosts": nhosts, "pending": npending, "pended": pended[0],
            "round_s": round(dt, 4), "pend_per_s": round(pended[0] / dt),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


if __name__ == "__main__":
    if sys.argv[1:] == ["pend"]:
        print(json.dumps(pend_rate_with_cache()))
    elif len(sys.argv) == 4:
        print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
    else:
        run()
