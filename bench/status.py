"""What a status query costs at a site's size: Slurm's ``squeue``, ``squeue -r``, ``squeue -u USER`` with
PENDING jobs (arrays and single jobs) plus FINISHED ones in the store, and ``sacct -S`` over the
finished ones; or LSF's ``bjobs -u all`` (``-w``, ``-o``) and ``bjobs -u USER``; whole processes through the launchers ``xce compat install`` writes, interleaved run
by run with ``python -c pass`` so that the machine's load hits all alike. One JSON line per command:
median, ratio to the interpreter's start, the load beside it. The Slurm peer's figures for the same
commands, side by side in the same loop, with ``--peer``: a live Slurm (bench/peers/slurm/setup.sh,
``SLURM_CONF`` set) is given the same pending jobs, held (``sbatch --hold``, the arrays as arrays),
and its ``squeue`` runs beside XCE's; its jobs are cancelled at the end. ``--before TREE`` runs
every command a second time against another tree of XCE (one exported with ``git archive``, run
through ``PYTHONPATH``), on a copy of the same store, alternating with this one, so that a change is
measured before and after under the same load.

    python -m bench.status                     # 10,000 pending + 100,000 finished, 5 runs
    python -m bench.status 100000 100000 3     # PENDING FINISHED RUNS
    python -m bench.status 10000 100000 3 lsf  # the same store, bjobs
    python -m bench.status 10000 100000 5 --peer --before /tmp/xce-main   # Slurm's and main's beside
"""

from __future__ import annotations

import json
import os
import shutil
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
    """The status commands of ``family`` a tool or a user polls."""
    squeue, sacct, bjobs = (str(bin_dir / p) for p in ("squeue", "sacct", "bjobs"))
    return {
        "slurm": {"squeue": [squeue], "squeue -r": [squeue, "-r"], "squeue -u USER": [squeue, "-u", "user07"],
                  "squeue -r -h -o '%i %t'": [squeue, "-r", "-h", "-o", "%i %t"],
                  "sacct -S": [sacct, "-a", "-X", "-P", "-n", "-S", "now-8days", "-o", "JobID,State,ExitCode"]},
        "lsf": {"bjobs -u all": [bjobs, "-u", "all"], "bjobs -u all -w": [bjobs, "-u", "all", "-w"],
                "bjobs -u all -noheader -o 'jobid stat'": [bjobs, "-u", "all", "-noheader", "-o", "jobid stat"],
                "bjobs -u user07": [bjobs, "-u", "user07"]},
    }[family]


#: Slurm's own commands for the same questions (its jobs are all the caller's: ``-u`` names it).
PEER = {"squeue": ["squeue"], "squeue -r": ["squeue", "-r"], "squeue -u USER": ["squeue", "-u", "root"],
        "squeue -r -h -o '%i %t'": ["squeue", "-r", "-h", "-o", "%i %t"]}


def seed_peer(n: int) -> None:
    """``n`` held jobs in the live Slurm, shaped as :func:`seed_pending` shapes XCE's: a tenth single
    jobs, the rest arrays of 100."""
    singles = n // 10
    for _ in range(singles):
        subprocess.run(["sbatch", "--hold", "-J", "sweep", "--wrap", "true"], check=True, stdout=subprocess.DEVNULL,
                       timeout=60)
    for _ in range((n - singles) // 100):
        subprocess.run(["sbatch", "--hold", "-J", "sweep", "--array=1-100", "--wrap", "true"], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)


def clear_peer() -> None:
    ids = subprocess.run(["squeue", "-h", "-o", "%F"], capture_output=True, text=True, timeout=120).stdout.split()
    for k in range(0, len(ids), 500):
        subprocess.run(["scancel", *sorted(set(ids))[k:k + 500]], timeout=120, check=False)


def _start(sd: Path, cfg: Path, tree: str | None):
    """A controller on ``sd``, run from ``tree`` (None: this one)."""
    from xce.client.launch import start_controller

    here = os.getcwd()
    if tree:
        os.chdir(tree)  # ``python -m`` puts the working directory first on the path
    try:
        return start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "86400"), timeout=300,
                                env={"PYTHONPATH": tree} if tree else None)
    finally:
        os.chdir(here)


def run(pending: int = PENDING, finished: int = FINISHED, runs: int = RUNS, family: str = "slurm",
        before: str | None = None, peer: bool = False) -> list[dict]:
    from bench.live import _compile_package
    from bench.workload import CONFIG, seed
    from xce.compat.install import install

    _compile_package()
    if before:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "compileall", "-q", before], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    rows = []
    ctls = []
    with tempfile.TemporaryDirectory(prefix="xce-bench-status-") as tmp:
        sd, cfg = Path(tmp) / "state", Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        if finished:
            seed(sd, cfg, finished)
        seed_pending(sd, cfg, finished + 1, pending)
        if before:
            shutil.copytree(sd, Path(tmp) / "state-before")
        bin_dir, _ = install(str(Path(tmp) / "bin"))
        try:
            trees = {"": None, **({"before: ": before} if before else {})}
            commands: dict[str, tuple[list[str], dict]] = {"python -c pass": ([sys.executable, "-c", "pass"], {})}
            for tag, tree in trees.items():
                ctl = _start(Path(tmp) / ("state-before" if tree else "state"), cfg, tree)
                ctls.append(ctl)
                env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": ctl.token("admin"),
                       **({"PYTHONPATH": tree} if tree else {})}
                for label, cmd in _commands(Path(bin_dir), family).items():
                    commands[tag + label] = (cmd, env)
            if peer:
                seed_peer(pending)
                commands.update({f"slurm: {label}": (cmd, dict(os.environ)) for label, cmd in PEER.items()})
            lines = {}
            for label, (cmd, env) in commands.items():
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
                if p.returncode != 0:
                    raise RuntimeError(f"{label}: exit {p.returncode}: {p.stderr.strip()}")
                lines[label] = len(p.stdout.splitlines())
            times: dict[str, list[float]] = {k: [] for k in commands}
            loads = []
            for _ in range(runs):
                for label, (cmd, env) in commands.items():
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
                for other, key in ((f"slurm: {label}", "ratio_to_slurm"), (f"before: {label}", "ratio_to_before")):
                    if other in times:
                        row[key] = round(med / statistics.median(times[other]), 2)
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            for ctl in ctls:
                ctl.stop()
            if peer:
                clear_peer()
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    numbers = [int(a) for a in args if a.isdigit()]
    tree = args[args.index("--before") + 1] if "--before" in args else None
    run(*numbers, family=next((a for a in args if a in ("slurm", "lsf")), "slurm"), before=tree,
        peer="--peer" in args)
