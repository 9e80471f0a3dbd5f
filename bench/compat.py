"""The LSF and Slurm front-ends as workflow tools run them: ``bjobs``, ``squeue`` and ``sacct`` for 10
job ids, whole processes, against a controller that holds 100,000 jobs.

Workflow tools poll these commands in loops (snakemake every few seconds, submitit per result), so a
status query must cost about what starting the interpreter costs: one filtered request, not a
listing. Each command runs through the launcher ``xce compat install`` writes, interleaved run by
run with ``python -c pass`` of the same interpreter, so that the machine's load hits all of them
alike; the figure is the ratio of medians (target: at most 1.6). The store is seeded as
:mod:`bench.workload` seeds it (finished jobs of 50 users over a week); the 10 ids asked about
ended just now, as a poll's do.

    python -m bench.compat              # 100,000 jobs, 30 runs of each command
    python -m bench.compat 20000 10     # N jobs, R runs
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = 100_000
RUNS = 30
WARMUP = 3
TARGET_RATIO = 1.6


def _commands(bin_dir: Path, ids: list[str]) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "bjobs": [str(bin_dir / "bjobs"), "-noheader", "-o", "jobid stat exit_code", *ids],
        "squeue": [str(bin_dir / "squeue"), "-h", "-t", "all", "-o", "%i %t", "-j", ",".join(ids)],
        "sacct": [str(bin_dir / "sacct"), "-X", "-P", "-n", "-o", "JobIDRaw,State,ExitCode", "-j", ",".join(ids)],
    }


def run(njobs: int = JOBS, runs: int = RUNS) -> list[dict]:
    from bench.live import _compile_package
    from bench.workload import CONFIG, seed
    from xce.client.launch import start_controller
    from xce.compat.install import install

    _compile_package()
    rows = []
    with tempfile.TemporaryDirectory(prefix="xce-bench-compat-") as tmp:
        sd, cfg = Path(tmp) / "state", Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        t0 = time.perf_counter()
        seed(sd, cfg, njobs)
        seeded = time.perf_counter() - t0
        bin_dir, _ = install(str(Path(tmp) / "bin"))
        ctl = start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "86400"), timeout=120)
        try:
            env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": ctl.token("admin")}
            commands = _commands(Path(bin_dir), _recent_ids(env))
            for label, cmd in commands.items():  # each answers, and what it answers is the 10 jobs
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
                if p.returncode != 0:
                    raise RuntimeError(f"{label}: exit {p.returncode}: {p.stderr.strip()}")
                if label != "python -c pass" and len(p.stdout.splitlines()) < 10:
                    raise RuntimeError(f"{label}: expected 10 jobs, got:\n{p.stdout}")
            times: dict[str, list[float]] = {k: [] for k in commands}
            loads = []
            for i in range(runs + WARMUP):
                for label, cmd in commands.items():
                    t = time.perf_counter()
                    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                    if i >= WARMUP:
                        times[label].append(time.perf_counter() - t)
                loads.append(os.getloadavg()[0])
            base = statistics.median(times["python -c pass"])
            for label in commands:
                med = statistics.median(times[label])
                row = {"figure": "compat_status_wall", "command": label, "jobs_in_store": njobs, "ids": 10,
                       "runs": runs, "median_ms": round(med * 1e3, 1),
                       "p90_ms": round(sorted(times[label])[int(0.9 * (len(times[label]) - 1))] * 1e3, 1),
                       "min_ms": round(min(times[label]) * 1e3, 1), "ratio_to_python": round(med / base, 2),
                       "load1_min": round(min(loads), 2), "load1_max": round(max(loads), 2), "seed_s": round(seeded, 1)}
                if label != "python -c pass":
                    row.update(target_ratio=TARGET_RATIO, met=med / base <= TARGET_RATIO)
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            ctl.stop()
    return rows


def _recent_ids(env: dict[str, str]) -> list[str]:
    """Ten jobs that ended just now, among the store's week of finished ones: what a workflow tool
    polls (``squeue -t all -j`` lists only jobs younger than MinJobAge; without ``-t``, none that ended)."""
    from xce.cli.client import connect

    client = connect(env["XCE_URL"], env["XCE_TOKEN"])
    fresh = [str(client.post("/v1/jobs", {"command": ["true"], "hold": True, "cwd": "/"})["jobid"])
             for _ in range(10)]
    client.post("/v1/jobs/act", {"action": "kill", "jobs": fresh})
    return fresh


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    run(*args)
