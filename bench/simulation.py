"""Simulator speed: wall time, peak memory and cost per job for the archive traces and a synthetic one.

Each figure runs in its own child process so that its peak RSS (``ru_maxrss``) is its own.
Plots are off; reading the trace is timed separately from the closed loop.

    .venv/bin/python bench/simulation.py            # all figures, one JSON line each
    .venv/bin/python bench/simulation.py nasa       # one figure
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

#: The traces that ship with the project (examples/traces/README.md says where each comes from).
TRACES = str(Path(__file__).resolve().parents[1] / "examples" / "traces")
CASES = {
    "nasa": {"trace": f"{TRACES}/NASA-iPSC-1993-3.1-cln.swf", "hosts": 128, "target_s": 3.0, "accasim_s": 3.9},
    "lublin": {"trace": f"{TRACES}/lublin_256.swf", "hosts": 256, "target_s": 5.0, "accasim_s": 43.0},
    "synthetic_50k": {"synthetic": 50_000, "hosts": 2000, "target_s": None},
    "synthetic_200k": {"synthetic": 200_000, "hosts": 2000, "target_s": 30.0},
}
MEMORY_LIMIT_MB = 1024


def measure(name: str) -> dict:
    from xce.sim import simulate, uniform_cluster
    from xce.sim.report import summary
    from xce.sim.swf import read_swf
    from xce.sim.synthetic import generate

    case = CASES[name]
    t0 = time.perf_counter()
    trace = generate(case["synthetic"], slots=case["hosts"]) if "synthetic" in case else read_swf(case["trace"])
    load_s = time.perf_counter() - t0
    marks: list[tuple[int, float]] = []
    half = len(trace) // 2

    def progress(done: int, total: int) -> None:
        if not marks and done >= half:
            marks.append((done, time.perf_counter()))

    t1 = time.perf_counter()
    result = simulate(trace, uniform_cluster(case["hosts"], 1), progress=progress)
    t2 = time.perf_counter()
    s = summary(result)
    n = len(trace)
    mid_done, mid_t = marks[0] if marks else (n, t2)
    first_us = (mid_t - t1) / max(mid_done, 1) * 1e6
    second_us = (t2 - mid_t) / max(n - mid_done, 1) * 1e6
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {
        "figure": name, "jobs": n, "hosts": case["hosts"], "slots_per_host": 1,
        "sim_wall_s": round(result.wall_s, 3), "load_s": round(load_s, 3),
        "total_s": round(load_s + result.wall_s, 3), "target_s": case["target_s"],
        "meets_target": None if case["target_s"] is None else load_s + result.wall_s < case["target_s"],
        "per_job_us": round(result.wall_s / max(n, 1) * 1e6, 1),
        "per_job_us_first_half": round(first_us, 1), "per_job_us_second_half": round(second_us, 1),
        "events": result.events, "rounds": result.rounds, "decisions": result.decisions,
        "events_per_s": s["events_per_s"], "peak_rss_mb": round(rss_mb, 1),
        "memory_ok": rss_mb < MEMORY_LIMIT_MB, "mean_wait_s": round(s["wait_mean_s"], 1),
        "utilization": round(s["utilization"], 3), "peak_queue_length": s["peak_queue_length"],
    }
    if "accasim_s" in case:
        out["accasim_1_1_3_s"] = case["accasim_s"]
    return out


def run(names: list[str] | None = None) -> list[dict]:
    """Every figure, each measured in a fresh interpreter."""
    results = []
    for name in names or list(CASES):
        proc = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        results.append(row)
    return results


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--one"]:
        print(json.dumps(measure(args[1])))
    else:
        for fig in run(args or None):
            print(json.dumps(fig), flush=True)
