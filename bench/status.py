"""What a status query costs at a site's size: Slurm's ``squeue``, ``squeue -r``, ``squeue -u USER`` with
PENDING jobs (arrays and single jobs) plus FINISHED ones in the store, and ``sacct -S`` over the
finished ones; or LSF's ``bjobs -u all`` (``-w``, ``-o``) and ``bjobs -u USER``; whole processes through the launchers ``xce compat install`` writes, interleaved run
by run with ``python -c pass`` so that the machine's load hits all alike. One JSON line per command:
median, ratio to the interpreter's start, the load beside it. The Slurm peer's figures for the same
commands come from ``python -m bench peer`` (bench/peers/slurm/).

    python -m bench.status                     # 10,000 pending + 100,000 finished, 5 runs
    python -m bench.status 100000 100000 3     # PENDING FINISHED RUNS
    python -m bench.status 10000 100000 3 lsf  # the same store, bjobs
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

PENDING, FINISHED, RUNS = 10_000, 100_000, 5


def seed_pending(state_dir: Path, config: Path, first: int, n: int) -> None:
    """``n`` pending jobs after the finished ones: a tenth single jobs, the rest arrays of 100 (what
    a parameter sweep leaves waiting), of 50 users, as the scheduler leaves them (a pend reason)."""
    from bench.workload import QUEUES, USERS
    from xce.controller.service import Controller, Settings, dumps
    from xce.controller.store.schema import jobs

    ctl = Controller(Settings(state_dir=state_dir, config_path=config))
    ctl.open()
    try:
        now = time.time_ns()
        rows = []
        singles = n // 10
        for k in range(n):
            i = first + k
            user = f"user{k % USERS:02d}"
            array_id = array_index = None
            if k >= singles:
                j = k - singles
                array_id, array_index = first + singles + (j // 100) * 100, j % 100 + 1
                user = f"user{(j // 100) % USERS:02d}"
            rows.append({
                "id": i, "user": user, "queue": QUEUES[k % len(QUEUES)], "project": "default", "job_type": "t",
                "priority": 0, "state": "PEND", "tasks": 1, "request": "", "sched_request": "",
                "command": dumps(["/bin/true"]), "cwd": "/tmp", "env": dumps({"HOME": "/tmp"}), "stdout": None,
                "stderr": None, "requests": dumps({}), "limits": dumps({}), "array_id": array_id,
                "array_index": array_index, "submit_time": now - (n - k) * 1000, "start_time": None,
                "end_time": None, "placement": None, "head_host": None,
                "pend_reasons": dumps([{"step": "slots", "text": "needs slots 1, short by slots 1"}]),
                "pend_category": "slots", "reason": "submitted", "exit_code": None, "exit_signal": None,
                "usage": None, "name": "sweep"})
        with ctl.tx() as conn:
            for k in range(0, len(rows), 5000):
                conn.execute(jobs.insert(), rows[k:k + 5000])
    finally:
        ctl.close()


def _commands(bin_dir: Path, family: str) -> dict[str, list[str]]:
    """The status commands of ``family`` a tool or a user polls, and an interpreter start to compare."""
    squeue, sacct, bjobs = (str(bin_dir / p) for p in ("squeue", "sacct", "bjobs"))
    programs = {
        "slurm": {"squeue": [squeue], "squeue -r": [squeue, "-r"], "squeue -u USER": [squeue, "-u", "user07"],
                  "squeue -r -h -o '%i %t'": [squeue, "-r", "-h", "-o", "%i %t"],
                  "sacct -S": [sacct, "-a", "-X", "-P", "-n", "-S", "now-8days", "-o", "JobID,State,ExitCode"]},
        "lsf": {"bjobs -u all": [bjobs, "-u", "all"], "bjobs -u all -w": [bjobs, "-u", "all", "-w"],
                "bjobs -u all -noheader -o 'jobid stat'": [bjobs, "-u", "all", "-noheader", "-o", "jobid stat"],
                "bjobs -u user07": [bjobs, "-u", "user07"]},
    }[family]
    return {"python -c pass": [sys.executable, "-c", "pass"], **programs}


def run(pending: int = PENDING, finished: int = FINISHED, runs: int = RUNS, family: str = "slurm") -> list[dict]:
    from bench.live import _compile_package
    from bench.workload import CONFIG, seed
    from xce.client.launch import start_controller
    from xce.compat.install import install

    _compile_package()
    rows = []
    with tempfile.TemporaryDirectory(prefix="xce-bench-status-") as tmp:
        sd, cfg = Path(tmp) / "state", Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        if finished:
            seed(sd, cfg, finished)
        seed_pending(sd, cfg, finished + 1, pending)
        bin_dir, _ = install(str(Path(tmp) / "bin"))
        ctl = start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "86400"), timeout=300)
        try:
            env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": ctl.token("admin")}
            commands = _commands(Path(bin_dir), family)
            lines = {}
            for label, cmd in commands.items():
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
                if p.returncode != 0:
                    raise RuntimeError(f"{label}: exit {p.returncode}: {p.stderr.strip()}")
                lines[label] = len(p.stdout.splitlines())
            times: dict[str, list[float]] = {k: [] for k in commands}
            loads = []
            for _ in range(runs):
                for label, cmd in commands.items():
                    t = time.perf_counter()
                    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                    times[label].append(time.perf_counter() - t)
                loads.append(os.getloadavg()[0])
            base = statistics.median(times["python -c pass"])
            for label in commands:
                med = statistics.median(times[label])
                row = {"figure": f"{family}_status_wall", "command": label, "pending": pending, "finished": finished,
                       "lines": lines[label], "runs": runs, "median_ms": round(med * 1e3, 1),
                       "min_ms": round(min(times[label]) * 1e3, 1), "ratio_to_python": round(med / base, 2),
                       "load1_min": round(min(loads), 2), "load1_max": round(max(loads), 2),
                       "cpus": os.cpu_count()}
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            ctl.stop()
    return rows


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    run(*numbers, family=next((a for a in sys.argv[1:] if a in ("slurm", "lsf")), "slurm"))
