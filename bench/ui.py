"""The dashboard with 100,000 jobs in the store: how long each page takes to answer.

The store is seeded directly (a fresh state directory, the real schema through the controller's
own migrations, rows written in bulk): 100,000 jobs of 50 users in 4 queues, most finished, 20,000
pending with pend reasons of several categories, 5,000 running on 200 hosts, two history rows per
job. Then a real controller process serves it and each page is fetched over HTTP with a logged-in
session cookie, the way a browser asks for it, and timed end to end (client side).

    python -m bench ui           # with the other suites' machinery (results.json)
    python -m bench.ui [N]       # N jobs instead of 100,000

Targets (issue 21): the jobs page under 300 ms and the overview under 200 ms.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

JOBS = 100_000
HOSTS = 200
USERS = 50
QUEUES = ("normal", "high", "low", "long")
REPEAT = 30
CONFIG = """\
cluster_name = "bench-ui"
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
CATEGORIES = ("slots", "select", "mem", "shared", "span", None)


def seed(state_dir: Path, config: Path, njobs: int) -> None:
    """Write ``njobs`` jobs and ``HOSTS`` hosts into a fresh store at ``state_dir``."""
    from xce.controller.service import Controller, Settings, dumps
    from xce.controller.store.schema import hosts, job_history, jobs

    rng = random.Random(21)
    ctl = Controller(Settings(state_dir=state_dir, config_path=config))
    ctl.open()
    try:
        now = time.time_ns()
        host_names = [f"node{i:04d}" for i in range(HOSTS)]
        with ctl.tx() as conn:
            conn.execute(hosts.insert(), [
                {"name": h, "status": "ok", "resources": dumps({"slots": 32, "maxmem": 256 << 30, "ncpus": 32,
                                                                 "type": "X86_64"}),
                 "load": dumps({"mem": 200 << 30, "r1m": 12.5, "ut": 0.4}), "registered": now, "last_seen": now}
                for h in host_names])
        rows, history = [], []
        for i in range(1, njobs + 1):
            r = rng.random()
            state = "DONE" if r < 0.70 else "EXIT" if r < 0.75 else "PEND" if r < 0.95 else "RUN"
            submit = now - (njobs - i) * 1_000_000_000
            cat = rng.choice(CATEGORIES) if state == "PEND" else None
            reasons = None if cat is None else dumps([{"step": cat, "text": f"needs {cat}", "resource": "",
                                                      "needed": 0, "short": 0}])
            placement = None
            if state in ("RUN", "DONE", "EXIT"):
                placement = [[rng.choice(host_names), rng.choice((1, 2, 4))]]
            user = f"user{rng.randrange(USERS):02d}"
            rows.append({
                "id": i, "user": user, "queue": rng.choice(QUEUES), "project": "default", "job_type": "sim",
                "priority": rng.randrange(-10, 10), "state": state, "tasks": placement[0][1] if placement else 1,
                "request": "rusage[mem=2G]", "sched_request": "rusage[mem=2G]",
                "command": dumps(["/home/" + user + "/bin/solver", "--case", str(i)]), "cwd": "/home/" + user,
                "env": dumps({"OMP_NUM_THREADS": "4"}), "stdout": f"/home/{user}/out.{i}", "stderr": None,
                "requests": dumps({"mem": 2 << 30}), "limits": dumps({}), "array_id": None, "array_index": None,
                "submit_time": submit, "start_time": submit + 5_000_000_000 if placement else None,
                "end_time": submit + 60_000_000_000 if state in ("DONE", "EXIT") else None,
                "placement": dumps(placement) if placement else None,
                "head_host": placement[0][0] if placement else None, "pend_reasons": reasons, "pend_category": cat,
                "reason": "submitted", "exit_code": 0 if state == "DONE" else 1 if state == "EXIT" else None,
                "exit_signal": None, "usage": None})
            history.append({"jobid": i, "ts": submit, "from_state": None, "to_state": "PEND", "reason": "submitted",
                            "actor": user})
            if state != "PEND":
                history.append({"jobid": i, "ts": submit + 5, "from_state": "PEND", "to_state": "RUN",
                                "reason": "dispatched", "actor": "scheduler"})
        with ctl.tx() as conn:
            for k in range(0, len(rows), 5000):
                conn.execute(jobs.insert(), rows[k:k + 5000])
            for k in range(0, len(history), 10000):
                conn.execute(job_history.insert(), history[k:k + 10000])
    finally:
        ctl.close()


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))]


def run(njobs: int = JOBS) -> list[dict]:
    import httpx

    from xce.client.launch import start_controller

    rows = []
    with tempfile.TemporaryDirectory(prefix="xce-bench-ui-") as tmp:
        sd, cfg = Path(tmp) / "state", Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        t0 = time.perf_counter()
        seed(sd, cfg, njobs)
        seeded = time.perf_counter() - t0
        ctl = start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "86400"), timeout=120)
        try:
            http = httpx.Client(base_url=ctl.url, timeout=60)
            r = http.post("/ui/login", data={"token": ctl.token("admin")})
            assert r.status_code == 303, r.text
            last_page = (njobs + 49) // 50
            pages = {
                "overview": ("/ui/", 200),
                "jobs": ("/ui/jobs", 300),
                "jobs_user": ("/ui/jobs?user=user07", 300),
                "jobs_pending": ("/ui/jobs?state=PEND", 300),
                "jobs_pending_category": ("/ui/jobs?state=PEND&category=slots", 300),
                "jobs_queue_running": ("/ui/jobs?queue=high&state=RUN", 300),
                "jobs_sort_priority": ("/ui/jobs?sort=priority", 300),
                "jobs_sort_user_asc": ("/ui/jobs?sort=user&dir=asc", 300),
                "jobs_last_page": (f"/ui/jobs?page={last_page}", 300),
                "job": (f"/ui/jobs/{njobs // 2}", 300),
                "host": ("/ui/hosts/node0007", 300),
            }
            for name, (path, target) in pages.items():
                for _ in range(3):  # warm: imports, template compilation, page cache
                    assert http.get(path).status_code == 200, path
                lat = []
                for _ in range(REPEAT):
                    t = time.perf_counter()
                    resp = http.get(path, headers={"X-XCE-Fragment": "1"} if name == "overview_refresh" else None)
                    lat.append(time.perf_counter() - t)
                    assert resp.status_code == 200, (path, resp.status_code)
                row = {"figure": f"ui_{name}", "jobs": njobs, "path": path, "p50_ms": round(_pct(lat, 50) * 1e3, 1),
                       "p95_ms": round(_pct(lat, 95) * 1e3, 1), "max_ms": round(max(lat) * 1e3, 1),
                       "target_ms": target, "met": _pct(lat, 95) * 1e3 < target,
                       "load1": round(os.getloadavg()[0], 2)}
                print(json.dumps(row), flush=True)
                rows.append(row)
            metrics = []
            for _ in range(10):
                t = time.perf_counter()
                assert http.get("/metrics", headers={"Authorization": f"Bearer {ctl.token('metrics')}"}).status_code == 200
                metrics.append(time.perf_counter() - t)
            row = {"figure": "ui_metrics_scrape", "jobs": njobs, "p50_ms": round(_pct(metrics, 50) * 1e3, 1),
                   "max_ms": round(max(metrics) * 1e3, 1), "seed_s": round(seeded, 1)}
            print(json.dumps(row), flush=True)
            rows.append(row)
        finally:
            ctl.stop()
    return rows


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else JOBS)
