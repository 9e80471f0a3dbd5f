"""``xce workload export`` on a store of 100,000 finished jobs: how long the command a person types takes.

The store is seeded directly (a fresh state directory, the real schema through the controller's own
migrations, rows in bulk): 100,000 finished jobs (DONE and some EXIT) of 50 users in 4 queues over a
week, each with its memory accounting record, on 200 hosts. Then a real controller serves it and
``xce workload export --since 8d -o FILE`` runs as a separate process, timed from start to exit, in
both formats.

    python -m bench workload        # with the other suites (results.json)
    python -m bench.workload [N]    # N jobs instead of 100,000

Target (issue 25): under 10 s for 100,000 jobs.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = 100_000
HOSTS = 200
USERS = 50
QUEUES = ("normal", "high", "low", "long")
TARGET_S = 10.0
CONFIG = """\
cluster_name = "bench-workload"
default_queue = "normal"
[queues.normal]
priority = 30
[queues.high]
priority = 50
[queues.low]
priority = 10
[queues.long]
priority = 20
"""


def seed(state_dir: Path, config: Path, njobs: int) -> None:
    from xce.controller.service import Controller, Settings, dumps
    from xce.controller.store.schema import hosts, job_accounting, jobs

    rng = random.Random(25)
    ctl = Controller(Settings(state_dir=state_dir, config_path=config))
    ctl.open()
    try:
        now = time.time_ns()
        week = 7 * 86400 * 1_000_000_000
        names = [f"node{i:04d}" for i in range(HOSTS)]
        with ctl.tx() as conn:
            conn.execute(hosts.insert(), [
                {"name": h, "status": "ok", "resources": dumps({"slots": 32, "maxmem": 256 << 30, "ncpus": 32}),
                 "load": dumps({"mem": 200 << 30}), "registered": now, "last_seen": now} for h in names])
        rows, acct = [], []
        for i in range(1, njobs + 1):
            submit = now - week + (i * week) // (njobs + 1)
            start = submit + rng.randrange(0, 600) * 1_000_000_000
            end = start + rng.randrange(10, 7200) * 1_000_000_000
            tasks = rng.choice((1, 1, 1, 2, 4, 8, 32))
            state = "DONE" if rng.random() < 0.93 else "EXIT"
            user, queue = f"user{rng.randrange(USERS):02d}", rng.choice(QUEUES)
            rows.append({
                "id": i, "user": user, "queue": queue, "project": "default", "job_type": f"t{i % 7}",
                "priority": 0, "state": state, "tasks": tasks, "request": "rusage[mem=2G]",
                "sched_request": "rusage[mem=2G]", "command": dumps(["/home/" + user + "/bin/solver", str(i)]),
                "cwd": "/home/" + user, "env": dumps({}), "stdout": None, "stderr": None,
                "requests": dumps({}), "limits": dumps({}), "array_id": None, "array_index": None,
                "submit_time": submit, "start_time": start, "end_time": end,
                "placement": dumps([[names[i % HOSTS], tasks]]), "head_host": names[i % HOSTS], "pend_reasons": None,
                "pend_category": None, "reason": "done", "exit_code": 0 if state == "DONE" else 1,
                "exit_signal": None, "usage": None})
            acct.append({"jobid": i, "resource": "mem", "job_type": f"t{i % 7}", "queue": queue, "user": user,
                         "tasks": tasks, "state": state, "exit_code": 0, "exit_signal": None, "start_time": start,
                         "end_time": end, "run_time": end - start, "declared": (2 << 30) * tasks,
                         "peak": rng.randrange(1 << 20, 2 << 30) * tasks, "mean": 1 << 30, "samples": 10})
        with ctl.tx() as conn:
            for k in range(0, len(rows), 5000):
                conn.execute(jobs.insert(), rows[k:k + 5000])
                conn.execute(job_accounting.insert(), acct[k:k + 5000])
    finally:
        ctl.close()


def _xce() -> list[str]:
    exe = Path(sys.executable).parent / "xce"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "xce.cli.main"]


def run(njobs: int = JOBS) -> list[dict]:
    from xce.client.launch import start_controller

    rows = []
    with tempfile.TemporaryDirectory(prefix="xce-bench-workload-") as tmp:
        sd, cfg = Path(tmp) / "state", Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        t0 = time.perf_counter()
        seed(sd, cfg, njobs)
        seeded = time.perf_counter() - t0
        ctl = start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "86400"), timeout=120)
        try:
            env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": ctl.token("admin")}
            for fmt in ("swf", "xce"):
                out = Path(tmp) / f"week.{fmt}"
                t = time.perf_counter()
                cpu0 = os.times()
                p = subprocess.run(_xce() + ["workload", "export", "--since", "8d", "--format", fmt, "-o", str(out)],
                                   capture_output=True, text=True, env=env, timeout=600)
                wall = time.perf_counter() - t
                cpu1 = os.times()
                assert p.returncode == 0, p.stderr
                lines = sum(1 for ln in out.read_text().splitlines() if not ln.startswith((";", '{"xce_workload"')))
                assert lines == njobs, (lines, njobs)
                row = {"figure": f"workload_export_{fmt}", "jobs": njobs, "wall_s": round(wall, 2),
                       "client_cpu_s": round((cpu1.children_user + cpu1.children_system)
                                             - (cpu0.children_user + cpu0.children_system), 2),
                       "bytes": out.stat().st_size, "target_s": TARGET_S, "met": wall < TARGET_S,
                       "seed_s": round(seeded, 1), "load1": round(os.getloadavg()[0], 2)}
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            ctl.stop()
    return rows


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else JOBS)
