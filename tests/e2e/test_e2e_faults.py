"""Worker faults: a worker killed outright is unreachable and its jobs UNKWN, holding their slots, until it
returns (they run on and end as they end) or an administrator declares the host down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import read_pid, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _admin(cluster, *args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "xce.cli.admin", *args], env=cluster.env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _status(cluster, name: str) -> str:
    return {h["name"]: h["status"] for h in cluster.hosts()}[name]


def test_killed_worker_jobs_are_unknown_keep_their_slots_and_end_done_after_its_return(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=2, worker_timeout=3.0)
    name = cluster.worker_names[0]
    jobs = [xce.submit("--", "sh", "-c", f"echo $$ > j{i}.pid; sleep 15") for i in (1, 2)]
    for jobid in jobs:
        xce.wait_state(jobid, "RUN", 20)
    pids = [read_pid(xce.cwd / f"j{i}.pid") for i in (1, 2)]
    try:
        cluster.kill(name, signal.SIGKILL)
        wait_for(lambda: _status(cluster, name) == "unreach", 15, f"{name} to be unreachable")
        for jobid in jobs:
            unknown = xce.wait_state(jobid, "UNKWN", 10)
            assert unknown["reason"].startswith(f"unknown: worker {name} stopped reporting"), unknown["reason"]
        assert all(_alive(p) for p in pids)  # a worker that stops reporting does not stop its jobs
        # Their slots stay theirs: a new job waits rather than oversubscribing the host.
        waiting = xce.submit("--", "true")
        time.sleep(2.0)
        assert xce.job(waiting)["state"] == "PEND"
        assert "UNKWN" in xce("jobs").stdout

        cluster.start_worker(name)
        for jobid in jobs:
            back = xce.wait_state(jobid, ("RUN", "DONE"), 20)
            assert back["state"] == "DONE" or back["reason"] == f"running: worker {name} reported it still runs"
        for jobid in jobs:
            done = xce.wait_state(jobid, "DONE", 30)  # the exit status survived the worker's restart
            assert done["exit_code"] == 0
        xce.wait_state(waiting, "DONE", 30)
    finally:
        for p in pids:
            _kill_quietly(p)


def test_host_declared_down_requeues_rerunnable_jobs_ends_the_rest_and_its_return_kills_them(make_cluster):
    cluster, xce = make_cluster(workers=2, slots=2, worker_timeout=3.0)
    victim, spare = cluster.worker_names
    # Drain the spare host so that both jobs start on the victim (closing shows the reason in xce hosts).
    _admin(cluster, "host", "close", spare, "--reason", "kept free for the test")
    assert "closed (kept free for the test)" in xce("hosts").stdout
    rerun = xce.submit("--rerunnable", "--", "sh", "-c", "echo $$ > rerun.$XCE_EXEC_HOST.pid; sleep 60")
    once = xce.submit("--", "sh", "-c", "echo $$ > once.pid; sleep 60")
    for jobid in (rerun, once):
        assert xce.wait_state(jobid, "RUN", 20)["placement"][0]["host"] == victim
    _admin(cluster, "host", "open", spare)
    left = [read_pid(xce.cwd / f"rerun.{victim}.pid"), read_pid(xce.cwd / "once.pid")]
    moved = None
    try:
        cluster.kill(victim, signal.SIGKILL)
        for jobid in (rerun, once):
            xce.wait_state(jobid, "UNKWN", 20)
        out = _admin(cluster, "host", "down", victim, "--requeue").stdout
        assert f"Ended EXIT (host lost): {once}" in out and f"Requeued (rerunnable): {rerun}" in out, out
        ended = xce.wait_state(once, "EXIT", 10)
        assert ended["reason"].startswith(f"host lost: {victim} declared down"), ended["reason"]
        again = xce.wait_state(rerun, "RUN", 30)
        assert again["placement"][0]["host"] == spare
        moved = read_pid(xce.cwd / f"rerun.{spare}.pid")
        assert _status(cluster, victim) == "down"
        assert all(_alive(p) for p in left)  # the dead worker's jobs ran on, unseen

        cluster.start_worker(victim)  # it returns: what still runs of those jobs is killed first
        wait_for(lambda: not any(_alive(p) for p in left), 15, "the returned host's leftovers to be killed")
        assert _status(cluster, victim) == "ok"
        assert xce.job(rerun)["state"] == "RUN" and _alive(moved)  # the rerun elsewhere is untouched
        xce("kill", str(rerun))
        xce.wait_state(rerun, "EXIT", 20)
    finally:
        for p in [*left, *([moved] if moved else [])]:
            _kill_quietly(p)


def test_restarted_worker_adopts_its_running_job(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=2)
    name = cluster.worker_names[0]
    long = xce.submit("--", "sh", "-c", "echo $$ > long.pid; exec sleep 4")
    short = xce.submit("--", "sh", "-c", "echo $$ > short.pid; exec sleep 0.5")
    xce.wait_state(long, "RUN", 20)
    xce.wait_state(short, ("RUN", "DONE"), 20)
    pid = read_pid(xce.cwd / "long.pid")
    # RUN is the controller's word once it dispatched the job; its command runs once it wrote its pid.
    short_pid = read_pid(xce.cwd / "short.pid")
    try:
        cluster.kill(name, signal.SIGKILL)
        wait_for(lambda: not os.path.exists(f"/proc/{short_pid}/cmdline")
                 or open(f"/proc/{short_pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                 10, "the short job to end while its worker is down")
        cluster.start_worker(name)
        # The short job ended unseen: reported gone at re-registration (unless it was reported before the kill).
        gone = xce.wait_state(short, ("EXIT", "DONE"), 20)
        if gone["state"] == "EXIT":
            assert "lost" in gone["reason"], gone["reason"]
        # The long job was adopted: still RUN after the re-registration, then its end is noticed,
        # with its exit status (its spawner recorded it; the new worker is not its parent).
        assert xce.job(long)["state"] == "RUN"
        ended = xce.wait_state(long, ("EXIT", "DONE"), 20)
        assert ended["state"] == "DONE" and ended["exit_code"] == 0, ended
    finally:
        _kill_quietly(pid)


def test_a_parallel_job_is_lost_when_one_of_its_other_hosts_dies(make_cluster):
    cluster, xce = make_cluster(workers=2, slots=1, worker_timeout=3.0)
    jobid = xce.submit("-n", "2", "--", "sh", "-c", "echo $$ > par.pid; exec sleep 60")
    job = xce.wait_state(jobid, "RUN", 20)
    hosts = [p["host"] for p in job["placement"]]
    assert len(hosts) == 2
    head, other = hosts
    wait_for(lambda: (xce.cwd / "par.pid").exists(), 10, "the job's command to start on its first host")
    pid = read_pid(xce.cwd / "par.pid")
    try:
        cluster.kill(other, signal.SIGKILL)
        lost = xce.wait_state(jobid, "EXIT", 20)
        assert "lost" in lost["reason"] and other in lost["reason"], lost["reason"]
        # Its command on the first host is stopped too: nothing runs for a job that is gone.
        wait_for(lambda: not os.path.exists(f"/proc/{pid}/cmdline")
                 or open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                 15, f"the job's command on {head} to be stopped")
    finally:
        _kill_quietly(pid)
