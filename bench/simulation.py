"""Simulator speed and memory: whole ``xce sim run`` processes and the closed loop alone.

Two kinds of figure, each measured in a fresh interpreter so that its peak RSS is its own:

* ``process``: the command a person types (``python -m xce.cli.sim_cmd run --workload F --json``),
  timed from start to exit (wall, and CPU seconds, which other load on a shared machine changes
  far less), peak RSS from ``ru_maxrss`` of that child. This is where start-up cost
  (imports, reading, writing) shows. Targets: a 3,000-job trace in under 0.5 s + 60 us per job;
  an LLNL-Atlas-like trace (20,000 jobs, 9,216 hosts, jobs up to the whole machine) under 300 MB;
  a CEA-Curie-like one (300,000 jobs, 90,112 processors) under 1 GB.
* ``loop``: reading and the closed loop inside one process (no CLI), with the cost per job in each
  half of the run (a loop whose cost grows with time shows here).

Synthetic traces come from :mod:`xce.sim.synthetic` (deterministic, same bytes on every machine)
and are written to a temporary directory first, so they are read like any archive trace.

    .venv/bin/python bench/simulation.py                # every figure, one JSON line each
    .venv/bin/python bench/simulation.py nasa_3k atlas_like_20k
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "examples" / "traces"
NASA = TRACES / "NASA-iPSC-1993-3.1-cln.swf"

CASES: dict[str, dict] = {
    # whole processes
    "nasa_3k": {"kind": "process", "trace": NASA, "args": ["--max-jobs", "3000"], "jobs": 3000,
                "target_s": 0.5 + 3000 * 60e-6},
    "nasa_3k_plots_report": {"kind": "process", "trace": NASA, "args": ["--max-jobs", "3000", "--report", "{tmp}/r.html"],
                             "jobs": 3000, "target_s": None},
    "nasa_full": {"kind": "process", "trace": NASA, "args": [], "jobs": 18239, "target_s": 0.5 + 18239 * 60e-6},
    "lublin_full": {"kind": "process", "trace": TRACES / "lublin_256.swf", "args": [], "jobs": 10000,
                    "target_s": 0.5 + 10000 * 60e-6},
    "atlas_like_20k": {"kind": "process", "synthetic": {"jobs": 20_000, "nodes": 9216, "procs_per_node": 1},
                       "args": [], "jobs": 20_000, "target_mb": 300},
    "curie_like_300k": {"kind": "process", "synthetic": {"jobs": 300_000, "nodes": 5632, "procs_per_node": 16,
                                                         "widest": 0.125},
                        "args": [], "jobs": 300_000, "target_mb": 1024},
    # the loop alone
    "loop_nasa": {"kind": "loop", "trace": NASA, "hosts": 128},
    "loop_synthetic_200k": {"kind": "loop", "synthetic_narrow": 200_000, "hosts": 2000},
}


def _trace_file(case: dict, tmp: str) -> Path:
    if "trace" in case:
        return case["trace"]
    from xce.sim.synthetic import generate_wide, write_swf

    path = Path(tmp) / "synthetic.swf"
    write_swf(generate_wide(**case["synthetic"]), path)
    return path


def measure_process(name: str) -> dict:
    case = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        trace = _trace_file(case, tmp)
        args = [a.replace("{tmp}", tmp) for a in case["args"]]
        cmd = [sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(trace), "--json", *args]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{name}: {proc.stderr.strip()}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    s = json.loads(proc.stdout)
    out = {"figure": f"sim_{name}", "kind": "process", "jobs": s["jobs_simulated"], "hosts": s["hosts"],
           "slots": s["slots"], "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "sim_loop_s": s["sim_wall_s"],
           "outside_loop_s": round(wall - s["sim_wall_s"], 3), "per_job_us": round(wall / max(1, s["jobs_simulated"]) * 1e6, 1),
           "peak_rss_mb": round(rss_mb, 1), "rounds": s["rounds"], "events": s["events"],
           "peak_queue_length": s["peak_queue_length"], "utilization": round(s["utilization"], 3),
           "load1": round(os.getloadavg()[0], 2)}
    if case.get("target_s") is not None:
        out["target_s"] = round(case["target_s"], 3)
        out["meets_target"] = wall < case["target_s"]
        out["cpu_meets_target"] = cpu < case["target_s"]  # what an idle machine would show
    if case.get("target_mb") is not None:
        out["target_mb"] = case["target_mb"]
        out["meets_target"] = rss_mb < case["target_mb"]
    return out


def measure_loop(name: str) -> dict:
    from xce.sim import simulate, uniform_cluster
    from xce.sim.report import summary
    from xce.sim.swf import read_swf
    from xce.sim.synthetic import generate

    case = CASES[name]
    t0 = time.perf_counter()
    trace = generate(case["synthetic_narrow"], slots=case["hosts"]) if "synthetic_narrow" in case \
        else read_swf(case["trace"])
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
    return {
        "figure": f"sim_{name}", "kind": "loop", "jobs": n, "hosts": case["hosts"], "load_s": round(load_s, 3),
        "sim_loop_s": round(result.wall_s, 3), "per_job_us": round(result.wall_s / max(n, 1) * 1e6, 1),
        "per_job_us_first_half": round((mid_t - t1) / max(mid_done, 1) * 1e6, 1),
        "per_job_us_second_half": round((t2 - mid_t) / max(n - mid_done, 1) * 1e6, 1),
        "events": result.events, "rounds": result.rounds, "decisions": result.decisions,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "mean_wait_s": round(s["wait_mean_s"], 1), "utilization": round(s["utilization"], 3),
        "load1": round(os.getloadavg()[0], 2),
    }


def measure(name: str) -> dict:
    return measure_process(name) if CASES[name]["kind"] == "process" else measure_loop(name)


def run(names: list[str] | None = None) -> list[dict]:
    """Every figure, each measured in a fresh interpreter."""
    results = []
    for name in names or list(CASES):
        proc = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, check=True,
                              cwd=ROOT)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        results.append(row)
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    args = sys.argv[1:]
    if args[:1] == ["--one"]:
        print(json.dumps(measure(args[1])))
    else:
        unknown = [a for a in args if a not in CASES]
        if unknown:
            raise SystemExit(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
        run(args or None)
