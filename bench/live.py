"""Live cluster: the real processes (controller, scheduler, 4 workers) on 127.0.0.1.

Every figure starts its own :class:`xce.cluster.local.LocalCluster` (what ``xce up`` starts) in a
fresh temporary state directory, so one figure's jobs never slow down the next one. The cluster's
configuration has two queues: ``normal`` (default; jobs run) and ``parked`` (``active = false``:
accepts submissions, dispatches nothing). Submission figures submit into ``parked`` so that the
workers do not compete for the machine's CPUs while the API is being measured; the figures about
running jobs use ``normal``.

    python -m bench live                 # every figure
    python -m bench.live submit latency  # some of them (names: see FIGURES)

Requests go through :class:`xce.cli.client.Client` (standard library, one keep-alive connection per
client), the same client the ``xce`` command uses.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

WORKERS = 4
ROUND_INTERVAL = 0.2  # LocalCluster's default, the same as `xce up` and the configuration default

CONFIG = """\
cluster_name = "bench"
default_queue = "normal"

[queues.normal]
description = "jobs run here"

[queues.parked]
description = "inactive: accepts submissions, dispatches nothing"
active = false
"""

VENV_XCE = Path(sys.executable).parent / "xce"


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))
    return s[k]


def _emit(row: dict) -> dict:
    # The machine's 1-minute load average when the figure was taken: on a shared 2-CPU machine a
    # load above 2 means the cluster's processes were competing with something else.
    row["load1"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row), flush=True)
    return row


@contextmanager
def cluster(workers: int = WORKERS, slots: int | None = None, round_interval: float = ROUND_INTERVAL):
    from xce.cluster.local import LocalCluster

    with tempfile.TemporaryDirectory(prefix="xce-bench-") as tmp:
        cfg = Path(tmp) / "xce.toml"
        cfg.write_text(CONFIG)
        lc = LocalCluster(Path(tmp) / "state", workers=workers, slots=slots, config=cfg,
                          round_interval=round_interval, report_interval=1.0, work_dir=str(Path(tmp) / "work"))
        (Path(tmp) / "work").mkdir()
        lc.start()
        try:
            yield lc
        finally:
            lc.stop()


def client(lc, role: str = "user"):
    from xce.cli.client import Client

    token = (lc.state_dir / "token").read_text().strip() if role == "user" else lc.token(role)
    return Client(lc.url, token)


def _job(queue: str = "parked", command: list[str] | None = None, **extra) -> dict:
    return {"command": command or ["true"], "queue": queue, **extra}


# -- submissions per second, one job per request -------------------------------------------
def submit_rate(n_seq: int = 2000, n_threads: int = 4, per_thread: int = 500) -> list[dict]:
    rows = []
    with cluster() as lc:
        c = client(lc)
        for _ in range(50):  # warm-up: first-request imports, SQLite page cache
            c.post("/v1/jobs", _job())
        t0 = time.perf_counter()
        lat = []
        for _ in range(n_seq):
            t = time.perf_counter()
            r = c.post("/v1/jobs", _job())
            lat.append(time.perf_counter() - t)
            assert r["count"] == 1
        dt = time.perf_counter() - t0
        rows.append(_emit({"figure": "live_submit_rate", "clients": 1, "jobs": n_seq, "seconds": round(dt, 3),
                           "per_s": round(n_seq / dt), "p50_ms": round(_pct(lat, 50) * 1e3, 2),
                           "p99_ms": round(_pct(lat, 99) * 1e3, 2), "target_per_s": 500,
                           "met": n_seq / dt >= 500}))
        lats: list[list[float]] = [[] for _ in range(n_threads)]
        errors: list[BaseException] = []
        start = threading.Barrier(n_threads + 1)

        def worker(i: int) -> None:
            cc = client(lc)
            cc.post("/v1/jobs", _job())
            start.wait()
            try:
                for _ in range(per_thread):
                    t = time.perf_counter()
                    cc.post("/v1/jobs", _job())
                    lats[i].append(time.perf_counter() - t)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
        for th in threads:
            th.start()
        start.wait()
        t0 = time.perf_counter()
        for th in threads:
            th.join()
        dt = time.perf_counter() - t0
        if errors:
            raise errors[0]
        total = n_threads * per_thread
        flat = [x for li in lats for x in li]
        rows.append(_emit({"figure": "live_submit_rate", "clients": n_threads, "jobs": total,
                           "seconds": round(dt, 3), "per_s": round(total / dt),
                           "p50_ms": round(_pct(flat, 50) * 1e3, 2), "p99_ms": round(_pct(flat, 99) * 1e3, 2),
                           "target_per_s": 500, "met": total / dt >= 500}))
    return rows


# -- jobs per second with array submissions ------------------------------------------------
def array_rate(sizes=(1_000, 10_000), repeats: int = 3) -> list[dict]:
    rows = []
    with cluster() as lc:
        c = client(lc)
        c.post("/v1/jobs", _job(array=10))
        for size in sizes:
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                r = c.post("/v1/jobs", _job(array=size))
                times.append(time.perf_counter() - t)
                assert r["count"] == size
            best, med = min(times), statistics.median(times)
            rows.append(_emit({"figure": "live_array_submit", "array": size, "repeats": repeats,
                               "median_s": round(med, 4), "jobs_per_s": round(size / med),
                               "best_jobs_per_s": round(size / best), "target_per_s": 5000,
                               "met": size / med >= 5000}))
    return rows


# -- submit-to-RUN latency on an idle cluster ------------------------------------------------
def latency(samples: int = 50) -> list[dict]:
    rows = []
    with cluster() as lc:
        c = client(lc)
        admin = client(lc, "admin")
        to_run, to_ack, seen = [], [], []
        for i in range(samples + 2):
            # Idle: the kill of the previous sample (and its worker's report) made the scheduler run a
            # round; wait until that round is more than a round interval old, as on a quiet cluster.
            time.sleep(lc.round_interval + 0.4)
            t = time.perf_counter()
            r = c.post("/v1/jobs", _job("normal", ["sleep", "5"]))
            ack = time.perf_counter() - t
            jid = r["jobid"]
            while True:
                s = c.get("/v1/jobs", id=jid)["jobs"][0]
                if s["state"] != "PEND":
                    break
                time.sleep(0.002)
            polled = time.perf_counter() - t
            d = c.get(f"/v1/jobs/{jid}")
            run_ts = next(h["ts"] for h in d["history"] if h["to"] == "RUN")
            admin.post(f"/v1/jobs/{jid}/kill")
            if i < 2:  # warm-up
                continue
            to_run.append((run_ts - d["submit_time"]) / 1e9)
            to_ack.append(ack)
            seen.append(polled)
        row = {"figure": "live_submit_to_run", "samples": samples, "round_interval_s": lc.round_interval,
               "p50_ms": round(_pct(to_run, 50) * 1e3, 1), "p99_ms": round(_pct(to_run, 99) * 1e3, 1),
               "max_ms": round(max(to_run) * 1e3, 1),
               "client_seen_p50_ms": round(_pct(seen, 50) * 1e3, 1),
               "client_seen_p99_ms": round(_pct(seen, 99) * 1e3, 1),
               "submit_ack_p50_ms": round(_pct(to_ack, 50) * 1e3, 1),
               "target_p50_ms": 250, "met": _pct(to_run, 50) <= 0.25}
        rows.append(_emit(row))
    return rows


# -- jobs completed per second -------------------------------------------------------------
def _unfinished(c) -> int:
    return sum(q["njobs"] for q in c.get("/v1/queues")["queues"])


def _cpu_by_role(lc) -> dict[str, float]:
    """CPU seconds each kind of process has used so far: the controller, the scheduler, the workers,
    their spawners, and the job processes the spawners have reaped (the spawners' children's times)."""
    import psutil

    cpu = {"controller": 0.0, "scheduler": 0.0, "workers": 0.0, "spawners": 0.0, "jobs": 0.0}
    for key, popen in lc.procs.items():
        role = "controller" if key in lc.controller_keys else "scheduler" if key == "scheduler" else "workers"
        try:
            proc = psutil.Process(popen.pid)
            t = proc.cpu_times()
            cpu[role] += t.user + t.system
            for child in proc.children():  # a worker's spawner
                t = child.cpu_times()
                cpu["spawners"] += t.user + t.system
                cpu["jobs"] += t.children_user + t.children_system
        except psutil.NoSuchProcess:
            continue
    return {k: round(v, 2) for k, v in cpu.items()}


def throughput(n: int = 2000, slots: int | None = None, round_interval: float = ROUND_INTERVAL,
               on_start=None) -> dict:
    with cluster(slots=slots, round_interval=round_interval) as lc:
        if on_start:
            on_start(lc)
        c = client(lc)
        nslots = sum(int(h["resources"].get("slots", 0)) for h in c.get("/v1/hosts")["hosts"])
        t0 = time.perf_counter()
        r = c.post("/v1/jobs", _job("normal", ["true"], array=n))
        ids = r["jobids"]
        first, last = ids[0], ids[-1]
        deadline = t0 + 300.0
        # The queues' job counts are the controller's own tallies: asking costs it next to nothing, where
        # listing unfinished jobs every 50 ms cost it 3-9 % of its CPU in this very figure.
        while _unfinished(c) and time.perf_counter() < deadline:
            time.sleep(0.05)  # unfinished jobs left (this cluster has no others)
        dt = time.perf_counter() - t0
        cpu = _cpu_by_role(lc)
        jobs = c.get("/v1/jobs", user="all", all="true", limit=n + 10)["jobs"]
        finished = sum(1 for j in jobs if first <= j["jobid"] <= last and j["state"] in ("DONE", "EXIT"))
        ok = sum(1 for j in jobs if first <= j["jobid"] <= last and j["state"] == "DONE")
        starts = sorted(j["start_time"] for j in jobs if first <= j["jobid"] <= last and j["start_time"])
        ends = sorted(j["end_time"] for j in jobs if first <= j["jobid"] <= last and j["end_time"])
        return _emit({"figure": "live_throughput", "jobs": n, "workers": lc.nworkers, "slots": nslots,
                           "round_interval_s": round_interval,
                           "command": "true", "finished": finished, "done": ok, "seconds": round(dt, 2),
                           "jobs_per_s": round(finished / dt, 1),
                           "first_start_s": round((starts[0] - r["job"]["submit_time"]) / 1e9, 2) if starts else None,
                           "last_end_s": round((ends[-1] - r["job"]["submit_time"]) / 1e9, 2) if ends else None,
                           "cpu_s": cpu, "target_s": 8, "met": finished >= n and dt <= 8})


def throughputs() -> list[dict]:
    """Default slots (one per CPU: 2 per worker here), then 32 per worker, then a shorter round interval."""
    return [throughput(), throughput(slots=32), throughput(round_interval=0.05), throughput(slots=32, round_interval=0.05)]


# -- whole-process wall time of the CLI --------------------------------------------------------
def _compile_package() -> None:
    """Bytecode for the package, as ``pip install`` writes it (this environment may set
    PYTHONDONTWRITEBYTECODE, which would make every run compile the CLI's modules again)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__file__).resolve().parents[1] / "xce")],
                   env=env, check=True, stdout=subprocess.DEVNULL)


def cli_wall(runs: int = 40) -> list[dict]:
    """``xce submit -- true`` and ``xce jobs`` as whole processes, interleaved run by run with
    ``python -c pass`` of the same interpreter so that load changes hit all three alike."""
    _compile_package()
    rows = []
    xce = str(VENV_XCE) if VENV_XCE.exists() else None
    prefix = [xce] if xce else [sys.executable, "-m", "xce.cli.main"]
    with cluster() as lc:
        env = lc.env()
        commands = {"python -c pass": [sys.executable, "-c", "pass"],
                    "xce submit -- true": prefix + ["submit", "-q", "parked", "--", "true"],
                    "xce jobs": prefix + ["jobs"]}
        times: dict[str, list[float]] = {k: [] for k in commands}
        cpu: dict[str, list[float]] = {k: [] for k in commands}
        for i in range(runs + 3):
            for label, cmd in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                dt = time.perf_counter() - t
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if p.returncode != 0:
                    raise RuntimeError(f"{label}: exit {p.returncode}: {p.stderr.decode()}")
                if i >= 3:
                    times[label].append(dt)
                    cpu[label].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        base = statistics.median(times["python -c pass"])
        for label in commands:
            med = statistics.median(times[label])
            row = {"figure": "live_cli_wall", "command": label, "how": "installed script" if xce else "python -m",
                   "runs": runs, "median_ms": round(med * 1e3, 1), "p90_ms": round(_pct(times[label], 90) * 1e3, 1),
                   "min_ms": round(min(times[label]) * 1e3, 1),
                   "cpu_median_ms": round(statistics.median(cpu[label]) * 1e3, 1),
                   "ratio_to_python": round(med / base, 2)}
            if label == "xce submit -- true":
                row.update(target_ms=40, target_ratio=1.6, met=med <= 0.040 and med / base <= 1.6)
            rows.append(_emit(row))
    return rows


# -- single submissions per second, many clients, SQLite and PostgreSQL ------------------------
PG_SERVER = "postgresql://postgres@127.0.0.1:5432/test"


@contextmanager
def _pg_schema():
    """A fresh schema on the shared PostgreSQL, dropped afterwards (never touch shared objects)."""
    import uuid

    import sqlalchemy as sa

    engine = sa.create_engine(PG_SERVER.replace("postgresql://", "postgresql+psycopg://"))
    schema = f"xce_bench_{uuid.uuid4().hex[:10]}"
    with engine.begin() as c:
        c.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as c:
            c.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()


def _submit_storm(url: str, token: str, clients: int, per_client: int) -> tuple[float, list[float]]:
    from xce.cli.client import Client

    lats: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    start = threading.Barrier(clients + 1)

    def worker(i: int) -> None:
        c = Client(url, token)
        c.post("/v1/jobs", _job())
        start.wait()
        try:
            for _ in range(per_client):
                t = time.perf_counter()
                c.post("/v1/jobs", _job())
                lats[i].append(time.perf_counter() - t)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    start.wait()
    t0 = time.perf_counter()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return dt, [x for li in lats for x in li]


def submit_db(clients_list=(1, 16), per_client_total: int = 3000) -> list[dict]:
    """``POST /v1/jobs`` one job per request from 1 and from 16 clients, on SQLite and on PostgreSQL
    (group commit: the submissions that arrive while a commit is written share the next one)."""
    from xce.client.launch import start_controller

    rows = []
    for db in ("sqlite", "postgresql"):
        with tempfile.TemporaryDirectory(prefix="xce-bench-db-") as tmp, \
                (_pg_schema() if db == "postgresql" else nullcontext()) as url:
            cfg = Path(tmp) / "xce.toml"
            cfg.write_text(CONFIG)
            ctl = start_controller(Path(tmp) / "state", db=url, config=str(cfg))
            try:
                import httpx

                metrics = lambda ctl=ctl: httpx.get(f"{ctl.url}/metrics",  # noqa: E731
                                                    headers={"Authorization": f"Bearer {ctl.token('admin')}"}).text
                import psutil

                proc = psutil.Process(ctl.pid)
                for clients in clients_list:
                    per = max(1, per_client_total // clients)
                    before = _metric(metrics(), "xce_submit_commits_total")
                    cpu0 = sum(proc.cpu_times()[:2])
                    load1 = os.getloadavg()[0]
                    dt, lat = _submit_storm(ctl.url, ctl.user_token(), clients, per)
                    # The controller's own CPU per job: steadier than the rate on a shared machine, where
                    # the clients, the database server and everybody else compete for the same CPUs.
                    cpu = sum(proc.cpu_times()[:2]) - cpu0
                    commits = _metric(metrics(), "xce_submit_commits_total") - before - clients  # warm-ups
                    total = clients * per
                    row = {"figure": "live_submit_db", "db": db, "clients": clients, "jobs": total,
                           "seconds": round(dt, 2), "per_s": round(total / dt),
                           "p50_ms": round(_pct(lat, 50) * 1e3, 2), "p99_ms": round(_pct(lat, 99) * 1e3, 2),
                           "jobs_per_commit": round(total / max(commits, 1), 1),
                           "controller_cpu_ms_per_job": round(cpu / total * 1e3, 3), "load1": round(load1, 2)}
                    if db == "postgresql" and clients > 1:
                        row.update(target_per_s=1000, met=total / dt >= 1000)
                    rows.append(_emit(row))
            finally:
                ctl.stop()
    return rows


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


# -- controller memory with many jobs stored --------------------------------------------------
def memory(total: int = 1_000_000, chunk: int = 10_000) -> list[dict]:
    """Controller RSS with ``total`` PEND jobs stored (arrays of ``chunk`` into the inactive queue)."""
    import psutil

    rows = []
    with cluster() as lc:
        c = client(lc)
        proc = psutil.Process(lc.procs["controller"].pid)
        base = proc.memory_info().rss
        t0 = time.perf_counter()
        for _ in range(total // chunk):
            c.post("/v1/jobs", _job(array=chunk))
        dt = time.perf_counter() - t0
        time.sleep(1.0)  # let the scheduler read the feed: its long polls are served from the event log
        after_submit = proc.memory_info().rss
        listed = len(c.get("/v1/jobs", user="all", limit=100_000)["jobs"])
        after_list = proc.memory_info().rss
        sched = psutil.Process(lc.procs["scheduler"].pid).memory_info().rss
        rows.append(_emit({"figure": "live_controller_memory", "jobs": total, "listed": listed,
                           "queue": "parked (inactive)", "submit_s": round(dt, 2),
                           "rss_idle_mb": round(base / 2**20, 1), "rss_mb": round(after_submit / 2**20, 1),
                           "rss_after_list_100k_mb": round(after_list / 2**20, 1),
                           "kb_per_job": round((after_submit - base) / total / 1024, 3),
                           "target_kb_per_job": 1.0, "met": (after_submit - base) / total / 1024 <= 1.0,
                           "scheduler_rss_mb": round(sched / 2**20, 1)}))
    return rows


FIGURES = {"submit": submit_rate, "db": submit_db, "array": array_rate, "latency": latency,
           "throughput": throughputs, "cli": cli_wall, "memory": memory}


def run(names: list[str] | None = None) -> list[dict]:
    unknown = [n for n in names or [] if n not in FIGURES]
    if unknown:
        raise SystemExit(f"bench.live: unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    rows: list[dict] = []
    for name in names or list(FIGURES):
        rows.extend(FIGURES[name]())
    return rows


if __name__ == "__main__":
    run(sys.argv[1:] or None)
