"""A fleet on one machine: one controller and its scheduler with 1,000, 5,000 and 10,000 emulated
hosts (``xce emulate-hosts``: real registrations, polls, heartbeats and job reports; no job processes).

Per fleet size, in a fresh :class:`xce.cluster.local.LocalCluster` with no real worker:

* ``startup_s``: from starting the emulator to every host ``ok`` in the controller and the scheduler
  caught up with the event log (it has seen every registration);
* ``idle_cpu_pct``: the controller's CPU over ``IDLE_S`` seconds of an idle fleet, in % of one core
  (also the scheduler's and the emulator's);
* ``dispatch_s``: from submitting one array of 10,000 jobs to all 10,000 RUN (hosts have
  ceil(10,000 / N) slots, so the array fills the fleet); ``kill_all_s``: from killing them all to
  every one ended (the kills go out to the hosts and their ``finished`` reports come back);
* ``submit_to_run_p50_ms``: one job at a time on the idle fleet, from its submit time to its RUN in
  its history (the controller's clock), as ``bench.live`` measures it;
* RSS of the controller, the scheduler and the emulator after all that.

    python -m bench.fleet               # 1000 5000 10000
    python -m bench.fleet 1000          # some sizes

Every row is printed as one JSON line with the machine's load average (``load1``): the machine is
shared, so compare figures of one run.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

SIZES = (1_000, 5_000, 10_000)
JOBS = 10_000
IDLE_S = 30.0
LATENCY_SAMPLES = 30
ROUND_INTERVAL = 0.2  # LocalCluster's default, as `xce up`

CONFIG = """\
cluster_name = "fleet"
default_queue = "normal"

[queues.normal]
description = "jobs run here"
"""


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))] if s else float("nan")


def _emit(row: dict) -> dict:
    row["load1"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row), flush=True)
    return row


def _proc(lc, key: str):
    import psutil

    return psutil.Process(lc.procs[key].pid)


def _cpu(lc, key: str) -> float:
    t = _proc(lc, key).cpu_times()
    return t.user + t.system


def _rss_mb(lc, key: str) -> float:
    return round(_proc(lc, key).memory_info().rss / 2**20, 1)


def _counts(c) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in c.get("/v1/queues")["queues"]:
        for state, n in q["jobs"].items():
            out[state] = out.get(state, 0) + n
    return out


def _wait(what: str, check, timeout: float, poll: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


def fleet(n: int) -> dict:
    from xce.cli.client import Client
    from xce.cluster.local import LocalCluster

    slots = math.ceil(JOBS / n)
    with tempfile.TemporaryDirectory(prefix="xce-fleet-") as tmp:
        cfg = Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        lc = LocalCluster(Path(tmp) / "state", workers=0, config=cfg, round_interval=ROUND_INTERVAL)
        lc.start()
        try:
            user = Client(lc.url, (lc.state_dir / "token").read_text().strip())
            admin = Client(lc.url, lc.token("admin"))
            t0 = time.perf_counter()
            lc._spawn("emulator", ["xce.cli.main", "emulate-hosts", str(n), "--slots", str(slots),
                                   "--state-dir", str(lc.state_dir)])

            def all_ok() -> bool:
                if lc.procs["emulator"].poll() is not None:
                    raise RuntimeError(f"the emulator exited: see {lc.log_dir / 'emulator.log'}")
                hosts = admin.get("/v1/hosts")["hosts"]
                return sum(h["status"] == "ok" for h in hosts) == n

            _wait(f"{n} hosts to register", all_ok, 300, 0.5)
            _wait("the scheduler to catch up", lc._scheduler_synced, 120, 0.2)
            startup = time.perf_counter() - t0

            time.sleep(5.0)  # settle: the first heartbeats after registration
            before = {k: _cpu(lc, k) for k in ("controller", "scheduler", "emulator")}
            t = time.perf_counter()
            time.sleep(IDLE_S)
            span = time.perf_counter() - t
            idle = {k: round(100 * (_cpu(lc, k) - before[k]) / span, 2) for k in before}

            t = time.perf_counter()
            user.post("/v1/jobs", {"command": ["sleep", "3600"], "array": JOBS, "name": "fill"})
            _wait(f"{JOBS} jobs to run", lambda: _counts(admin).get("RUN", 0) >= JOBS, 600, 0.25)
            dispatch = time.perf_counter() - t
            t = time.perf_counter()
            user.post("/v1/jobs/act", {"action": "kill", "all": True})
            _wait("the array to end", lambda: _counts(admin).get("RUN", 0) == 0 and _counts(admin).get("PEND", 0) == 0,
                  600, 0.25)
            kill_all = time.perf_counter() - t

            to_run = []
            for i in range(LATENCY_SAMPLES + 2):
                time.sleep(ROUND_INTERVAL + 0.4)  # a quiet cluster: the last round is long past
                jid = user.post("/v1/jobs", {"command": ["sleep", "5"]})["jobid"]
                _wait("a job to start", lambda jid=jid: user.get("/v1/jobs", id=jid)["jobs"][0]["state"] != "PEND", 60, 0.002)
                d = user.get(f"/v1/jobs/{jid}")
                run_ts = next(h["ts"] for h in d["history"] if h["to"] == "RUN")
                admin.post(f"/v1/jobs/{jid}/kill")
                if i >= 2:  # warm-up
                    to_run.append((run_ts - d["submit_time"]) / 1e9)
            p50 = _pct(to_run, 50)
            return _emit({
                "figure": "fleet", "hosts": n, "slots_per_host": slots,
                "startup_s": round(startup, 1), "target_startup_s": 30,
                "idle_cpu_pct": idle, "idle_s": IDLE_S, "target_idle_controller_pct": 5,
                "dispatch_jobs": JOBS, "dispatch_s": round(dispatch, 1), "kill_all_s": round(kill_all, 1),
                "submit_to_run_p50_ms": round(p50 * 1e3, 1), "submit_to_run_p99_ms": round(_pct(to_run, 99) * 1e3, 1),
                "target_p50_ms": 50,
                "rss_mb": {k: _rss_mb(lc, k) for k in ("controller", "scheduler", "emulator")},
                "met": startup <= 30 and idle["controller"] <= 5 and p50 <= 0.05,
            })
        finally:
            lc.stop()


def run(sizes=SIZES) -> list[dict]:
    return [fleet(n) for n in sizes]


if __name__ == "__main__":
    try:
        sizes = tuple(int(a) for a in sys.argv[1:]) or SIZES
    except ValueError:
        print(f"usage: python -m bench.fleet [HOSTS ...] (numbers), got {' '.join(sys.argv[1:])}", file=sys.stderr)
        sys.exit(2)
    run(sizes)
