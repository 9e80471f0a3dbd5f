"""The fault campaign of issue 38, on real processes: database sessions killed under load, a full
disk under a whole cluster, a leader frozen (SIGSTOP) while it holds the lease row.

What a user would notice is what is checked, each time: every acknowledged job ends DONE and ran
exactly once (0 lost, 0 duplicated, 0 run twice, 0 stuck RUN), the controller holds no job nobody
was told of, and every answer during the fault was a success or a 503 (never a 500). Takeover
after a SIGSTOP of the leader must come within the lease plus 5 s.

Short in the suite; ``make faults`` runs the long version (``XCE_FAULTS=long``: longer faults, 50
SIGSTOPs). The figures are printed as one JSON line per test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from pgschema import PG_SERVER

from xce.client.follow import Session, Unreachable, request_key
from xce.cluster import LocalCluster
from xce.controller.store.engine import session_name
from xce.testing.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LONG = os.environ.get("XCE_FAULTS") == "long"
FAST = {"round_interval": 0.05, "report_interval": 0.5}


class Load:
    """Steady submissions, each retried under one idempotency key until it is acknowledged; every
    answer's status is kept (the fault must never show as anything but a success or a 503)."""

    def __init__(self, urls: list[str], token: str, runs: Path, cwd: Path, every: float = 0.04) -> None:
        self.urls, self.token, self.runs, self.cwd, self.every = urls, token, runs, cwd, every
        self.acked: list[int] = []
        self.statuses: dict[int, int] = {}
        self.bad: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="submitter", daemon=True)

    def run(self) -> None:
        body = {"command": ["sh", "-c", f"echo $XCE_JOBID >> {self.runs}/$XCE_JOBID"], "cwd": str(self.cwd)}
        with Session(self.urls, self.token, patience=60, timeout=20) as http:
            while not self.stop.is_set():
                key = request_key()
                while True:  # the same submission until it is acknowledged
                    try:
                        r = http.post("/v1/jobs", json=body, key=key)
                    except Unreachable:
                        time.sleep(0.2)
                        continue
                    self.statuses[r.status_code] = self.statuses.get(r.status_code, 0) + 1
                    if r.status_code == 201:
                        self.acked.append(r.json()["jobid"])
                        break
                    if r.status_code != 503:
                        self.bad.append(f"HTTP {r.status_code}: {r.text[:300]}")
                    if "\n" in r.text.strip() or not r.text.strip():
                        self.bad.append(f"HTTP {r.status_code} without a one-line message: {r.text[:300]!r}")
                    time.sleep(0.1)
                self.stop.wait(self.every)

    def __enter__(self) -> "Load":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(90)


def all_jobs(url: str, token: str) -> list[dict]:
    r = httpx.get(url + "/v1/jobs", params={"all": True, "user": "all", "limit": 100000},
                  headers={"Authorization": f"Bearer {token}"}, timeout=30)
    r.raise_for_status()
    return r.json()["jobs"]


def check_outcome(cluster: LocalCluster, load: Load, timeout: float = 120) -> dict:
    """Every acknowledged job DONE, once; nothing else in the controller; the figures."""
    assert not load.bad, load.bad[:5]
    assert load.acked, "no submission was acknowledged"
    token = cluster.token("admin")

    def leader_jobs() -> list[dict]:
        for url in cluster.urls:
            try:
                return all_jobs(url, token)
            except httpx.HTTPError:
                continue
        return []

    def settled() -> bool:
        return {j["state"] for j in leader_jobs() if j["jobid"] in set(load.acked)} == {"DONE"}

    wait_for(settled, timeout, lambda: "every acknowledged job DONE (now " + json.dumps(
        sorted({j["state"] for j in leader_jobs()})) + ")", interval=0.5)
    jobs = leader_jobs()
    ids = [j["jobid"] for j in jobs]
    runs = {int(p.name): p.read_text().split() for p in load.runs.iterdir()}
    figures = {
        "acked": len(load.acked),
        "lost": len(set(load.acked) - set(ids)),
        "duplicated": len(load.acked) - len(set(load.acked)) + len(ids) - len(set(ids)),
        "unacknowledged_jobs": len(set(ids) - set(load.acked)),
        "run_twice": sum(1 for v in runs.values() if len(v) != 1),
        "never_ran": len(set(load.acked) - set(runs)),
        "stuck_run": sum(1 for j in jobs if j["state"] in ("RUN", "UNKWN")),
        "answers": {str(k): v for k, v in sorted(load.statuses.items())},
    }
    assert figures["lost"] == figures["duplicated"] == figures["unacknowledged_jobs"] == 0, figures
    assert figures["run_twice"] == figures["never_ran"] == figures["stuck_run"] == 0, figures
    assert set(load.statuses) <= {201, 503}, figures
    return figures


def terminate_sessions(engine: sa.engine.Engine, app: str) -> int:
    with engine.begin() as c:
        return c.execute(sa.text("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                                 "WHERE application_name = :app"), {"app": app}).scalar() or 0


def lease_holder(schema_url: str) -> str:
    engine = sa.create_engine(schema_url)
    try:
        with engine.connect() as c:
            return c.execute(sa.text("SELECT holder FROM leadership WHERE id = 1")).scalar()
    finally:
        engine.dispose()


@pytest.fixture
def cluster_in(tmp_path):
    """``cluster_in(state_dir, **options)`` -> a started LocalCluster, stopped at teardown."""
    made: list[LocalCluster] = []

    def make(state: Path, **options) -> LocalCluster:
        c = LocalCluster(state, **{**FAST, **options})
        made.append(c)
        c.start()
        return c

    yield make
    for c in made:
        for p in c.procs.values():  # a frozen process would not hear the SIGTERM
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        c.stop()


def runs_dirs(tmp_path: Path) -> tuple[Path, Path]:
    runs, work = tmp_path / "runs", tmp_path / "work"
    runs.mkdir()
    work.mkdir()
    return runs, work


# -- 1 and 2: the database session of the controller killed again and again (PostgreSQL) ------------

def test_killed_database_sessions_answer_503_and_lose_no_report(tmp_path, pg_url, cluster_in):
    """Reports made while the controller's session dies are sent again, not dropped: no job stays
    RUN; a submission after a killed session gets a fresh id (no duplicate key)."""
    cluster = cluster_in(tmp_path / "state", workers=1, slots=4, db=pg_url, lease_timeout=2.0)
    runs, work = runs_dirs(tmp_path)
    server = sa.create_engine(PG_SERVER)
    try:
        app = session_name(lease_holder(pg_url))
        killed = 0
        fault_s = 30.0 if LONG else 4.0
        with Load([cluster.url], cluster.token("admin"), runs, work) as load:
            end = time.monotonic() + fault_s
            while time.monotonic() < end:
                killed += terminate_sessions(server, app)
                time.sleep(0.3)
        figures = check_outcome(cluster, load)
        figures["sessions_killed"] = killed
        print("\n" + json.dumps({"fault": "killed database sessions", **figures}))
        assert killed >= 4
        log = (cluster.log_dir / "controller.log").read_text()
        assert "Internal Server Error" not in log and "Traceback" not in log, log[-3000:]
    finally:
        server.dispose()


# -- 3: a full disk under the whole cluster (SQLite store, journals, logs) -----------------------------

def fill(path: Path) -> None:
    """Write ``path`` until the file system is full."""
    chunk = b"\0" * (1 << 20)
    with open(path, "wb", buffering=0) as f:  # unbuffered: nothing left over for close() to fail on
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
    # the last small pieces too, so that the next write of anyone fails
    with open(str(path) + ".tail", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def test_full_disk_closes_the_host_keeps_the_jobs_and_recovers_by_itself(tmp_path, cluster_in):
    """The worker's own files (its journal) fill first, while the controller still places jobs on it,
    so its journal fails whatever the timing (appending to a file's last, partly written page needs
    no new space: with the whole disk full at once, a journal that wrote little might not fail);
    then the rest of the disk, so the controller's database fails too."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mnt)], check=True)
    workers_disk = mnt / "state" / "workers"
    workers_disk.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(workers_disk)], check=True)
    try:
        cluster = cluster_in(mnt / "state", workers=1, slots=4)
        runs, work = runs_dirs(tmp_path)
        name = cluster.worker_names[0]
        worker_pid = cluster.procs[name].pid
        log = cluster.log_dir / f"{name}.log"
        full_s = 20.0 if LONG else 3.0
        with Load([cluster.url], cluster.token("admin"), runs, work) as load:
            time.sleep(1.0)
            fill(workers_disk / "filler")
            wait_for(lambda: "cannot write the job journal" in log.read_text(), 30, "the worker's journal to fail")
            fill(mnt / "filler")
            time.sleep(full_s)
            for disk in (workers_disk, mnt):
                os.unlink(disk / "filler")
                os.unlink(str(disk / "filler") + ".tail")
            time.sleep(2.0)
        figures = check_outcome(cluster, load)
        # The worker lived through it (not dead inside: its reports got through) and took jobs again.
        assert cluster.procs[name].poll() is None and cluster.procs[name].pid == worker_pid
        host = {h["name"]: h for h in cluster.hosts()}[name]
        assert host["status"] == "ok" and not host.get("closed"), host
        # Its journal did fail, and came back by itself.
        assert "the job journal in" in (cluster.log_dir / f"{name}.log").read_text()
        print("\n" + json.dumps({"fault": "full disk", "full_s": full_s, **figures}))
    finally:
        _stop_all_in(mnt)
        subprocess.run(["umount", "-l", str(workers_disk)], check=False)
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _stop_all_in(mnt: Path) -> None:
    """Stop every process that names a path under ``mnt`` (ours: the cluster), so it can be unmounted."""
    from ha_harness import processes_of

    for line in processes_of(mnt):
        pid = int(line.split(":", 1)[0])
        for sig in (signal.SIGCONT, signal.SIGTERM):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    wait_for(lambda: not processes_of(mnt), 20, "the cluster on the tmpfs to stop")


# -- 4: a leader frozen while its session holds the lease row ----------------------------------------

def leader_of(urls: list[str], token: str) -> tuple[str, int] | None:
    for url in urls:
        try:
            st = httpx.get(url + "/v1/status", headers={"Authorization": f"Bearer {token}"}, timeout=1.5).json()
        except (httpx.HTTPError, ValueError):
            continue
        if st["controller"]["role"] == "leader":
            return url, st["controller"]["pid"]
    return None


def hold_lease_row(pg_url: str, holder: str) -> sa.engine.Connection:
    """A session in the leader's name holding the lease row where PostgreSQL's idle timeout does not
    reach it (as when it blocks writing to a frozen process): the worst case, made certain."""
    stuck = sa.create_engine(pg_url, connect_args={"application_name": session_name(holder)}).connect()
    stuck.exec_driver_sql("SET idle_in_transaction_session_timeout = 0")
    stuck.exec_driver_sql("SELECT term FROM leadership WHERE id = 1 FOR SHARE")  # begins; never ends
    return stuck


def release(stuck: sa.engine.Connection) -> bool:
    """Close the holding session; True when the new leader had ended it already."""
    try:
        stuck.exec_driver_sql("SELECT 1")
        ended = False
    except sa.exc.OperationalError:
        ended = True
    try:
        stuck.close()
    except sa.exc.SQLAlchemyError:
        pass
    stuck.engine.dispose()
    return ended


def test_sigstop_of_the_leader_under_load_takeover_within_lease_plus_5s(tmp_path, pg_url, cluster_in):
    """Every few stops (the first among them) a session of the leader holds the lease row where no
    timeout of PostgreSQL ends it: the follower ends it itself and takes over in time all the same."""
    lease = 2.0
    stops = 50 if LONG else 2
    cluster = cluster_in(tmp_path / "state", workers=1, slots=4, db=pg_url, controllers=2, lease_timeout=lease)
    token = cluster.token("admin")
    runs, work = runs_dirs(tmp_path)
    takeovers: list[float] = []
    held = ended = 0
    with Load(cluster.urls, token, runs, work, every=0.02) as load:
        for i in range(stops):
            url, pid = wait_for(lambda: leader_of(cluster.urls, token), 30, "a leader")
            time.sleep(0.3)
            stuck = hold_lease_row(pg_url, lease_holder(pg_url)) if i % 5 == 0 else None
            os.kill(pid, signal.SIGSTOP)
            stopped = time.monotonic()
            try:
                wait_for(lambda: (l := leader_of(cluster.urls, token)) and l[0] != url, lease + 30,
                         "the follower to take over", interval=0.05)
                takeovers.append(time.monotonic() - stopped)
            finally:
                os.kill(pid, signal.SIGCONT)
                if stuck is not None:
                    held += 1
                    ended += release(stuck)
            wait_for(lambda: len([u for u in cluster.urls if _answers(u, token)]) == 2, 30, "both controllers up")
    figures = check_outcome(cluster, load)
    within = sum(1 for t in takeovers if t <= lease + 5.0)
    print("\n" + json.dumps({"fault": "SIGSTOP of the leader", "stops": stops, "lease_s": lease,
                             "within_lease_plus_5s": within, "row_held_by_a_stuck_session": held,
                             "stuck_sessions_ended": ended, "takeover_max_s": round(max(takeovers), 2),
                             "takeover_p50_s": round(sorted(takeovers)[len(takeovers) // 2], 2), **figures}))
    assert within == stops, takeovers
    assert ended == held


def _answers(url: str, token: str) -> bool:
    try:
        return httpx.get(url + "/v1/status", headers={"Authorization": f"Bearer {token}"}, timeout=1.5).is_success
    except httpx.HTTPError:
        return False
