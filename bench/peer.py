"""XCE and Slurm side by side: the same workloads, on the same machine, in the same run.

    python -m bench peer                    # seq and array, 1,000 jobs, twice each, alternating
    python -m bench.peer --n 200 --repeats 1 --workloads seq

Slurm 22.05 comes from Debian's packages through ``bench/peers/slurm/`` (``setup.sh`` installs and
starts ``munged``, ``slurmctld`` and one ``slurmd`` per emulated node on loopback; ``stop.sh``
stops exactly those processes, always, at the end). Both systems get 64 slots: Slurm 16 nodes x 4
CPUs, XCE 4 workers x 16 slots (what ``xce up --workers 4 --slots 16`` starts). The systems run
one after the other, never at once, alternating, and each row carries the machine's load: other
work on a shared machine slows whichever system runs at that moment, so compare the ratios of one
run, and run it more than once.

Workloads (each until every job is done):

* ``seq``: N jobs of ``true``, one submission process each (``xce submit -- true`` / ``sbatch
  --wrap true``), as people submit from shell loops;
* ``array``: one array of N (``xce submit --array N -- true`` / ``sbatch --array=0-N-1``).

One JSON line per measurement, then one per workload with the ratio ``xce_s / slurm_s`` (target for
``seq``: at most 1.5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLURM = HERE / "peers" / "slurm"
VENV_BIN = Path(sys.executable).parent
SLOTS = 64
TARGET_SEQ_RATIO = 1.5


def _emit(row: dict) -> dict:
    row["load1"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row), flush=True)
    return row


# -- XCE --------------------------------------------------------------------------------------

def _xce_cluster(tmp: Path):
    from xce.cluster.local import LocalCluster

    cfg = tmp / "xce.toml"
    cfg.write_text('cluster_name = "peer"\ndefault_queue = "normal"\n[queues.normal]\n')
    (tmp / "work").mkdir()
    return LocalCluster(tmp / "state", workers=4, slots=SLOTS // 4, config=cfg, work_dir=str(tmp / "work"))


def _wait_all_done(client, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if not client.get("/v1/jobs", user="all", limit=1)["jobs"]:
            return True
        time.sleep(0.02)
    return False


def xce_run(workload: str, n: int, timeout: float) -> dict:
    from xce.cli.client import Client

    with tempfile.TemporaryDirectory(prefix="xce-peer-") as tmp:
        lc = _xce_cluster(Path(tmp))
        lc.start()
        try:
            client = Client(lc.url, lc.token("admin"))
            env = lc.env()
            xce = str(VENV_BIN / "xce")
            t0 = time.monotonic()
            deadline = t0 + timeout
            errors = 0
            if workload == "seq":
                for _ in range(n):
                    r = subprocess.run([xce, "submit", "-o", "/dev/null", "--", "true"], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
                    errors += r.returncode != 0
            else:
                subprocess.run([xce, "submit", "-o", "/dev/null", "--array", str(n), "--", "true"], env=env,
                               stdout=subprocess.DEVNULL, check=True, cwd=tmp)
            submitted = time.monotonic() - t0
            done = _wait_all_done(client, deadline)
            total = time.monotonic() - t0
            jobs = client.get("/v1/jobs", user="all", all="true", limit=n + 10)["jobs"]
            ok = sum(1 for j in jobs if j["state"] == "DONE")
        finally:
            lc.stop()
    return _emit({"figure": f"peer_{workload}", "system": "xce", "jobs": n, "slots": SLOTS,
                  "submit_s": round(submitted, 2), "done_s": round(total, 2) if done else None,
                  "done": ok, "submit_errors": errors, "timed_out": not done})


# -- Slurm ------------------------------------------------------------------------------------

def _slurm_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PEER_DIR", "/tmp/xce-bench-slurmpeer")
    env["SLURM_CONF"] = f"{env['PEER_DIR']}/etc/slurm.conf"
    env.update(NODES="16", CPUS_PER_NODE=str(SLOTS // 16))
    return env


def slurm_setup() -> None:
    r = subprocess.run(["bash", str(SLURM / "setup.sh")], env=_slurm_env(), capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"Slurm peer did not start:\n{r.stderr[-3000:]}")


def slurm_stop() -> None:
    subprocess.run(["bash", str(SLURM / "stop.sh")], env=_slurm_env(), capture_output=True, text=True, timeout=300)


def slurm_run(workload: str, n: int, timeout: float) -> dict:
    env = dict(_slurm_env(), N=str(n), PHASES=workload, PHASE_TIMEOUT=str(int(timeout)))
    r = subprocess.run(["bash", str(SLURM / "bench.sh")], env=env, capture_output=True, text=True,
                       timeout=timeout + 120)
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    phase = next((x for x in rows if x.get("metric") == f"throughput_{workload}"), None)
    if phase is None:
        raise RuntimeError(f"Slurm {workload} gave no result:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return _emit({"figure": f"peer_{workload}", "system": "slurm", "jobs": n, "slots": SLOTS,
                  "submit_s": phase["submit_s"], "done_s": phase["first_submit_to_all_completed_s"],
                  "done": phase["slurm_reported_1s"]["states"].get("COMPLETED", 0),
                  "submit_errors": phase["submit_errors"], "timed_out": phase["timed_out"]})


# -- both -------------------------------------------------------------------------------------

def run(workloads: tuple[str, ...] = ("seq", "array"), n: int = 1000, repeats: int = 2,
        timeout: float = 600.0) -> list[dict]:
    from bench.live import _compile_package

    rows: list[dict] = []
    # Bytecode for the package, as `pip install` writes it: without it (PYTHONDONTWRITEBYTECODE, an
    # editable checkout) every `xce submit` compiles its modules again: 12 ms more per command here.
    _compile_package()
    slurm_setup()
    try:
        for workload in workloads:
            xs, ss = [], []
            for _ in range(repeats):
                x = xce_run(workload, n, timeout)
                s = slurm_run(workload, n, timeout)
                rows += [x, s]
                if x["done_s"] and s["done_s"]:
                    xs.append(x["done_s"])
                    ss.append(s["done_s"])
            if xs:
                ratios = [a / b for a, b in zip(xs, ss, strict=True)]
                row = {"figure": f"peer_{workload}_ratio", "jobs": n, "runs": len(xs),
                       "xce_s": [round(v, 2) for v in xs], "slurm_s": [round(v, 2) for v in ss],
                       "ratio_xce_over_slurm": [round(r, 2) for r in ratios],
                       "median_ratio": round(statistics.median(ratios), 2)}
                if workload == "seq":
                    row.update(target=TARGET_SEQ_RATIO, met=statistics.median(ratios) <= TARGET_SEQ_RATIO)
                rows.append(_emit(row))
    finally:
        slurm_stop()
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.peer", description="XCE and Slurm side by side.")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workloads", default="seq,array")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    run(tuple(w for w in args.workloads.split(",") if w), args.n, args.repeats, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
