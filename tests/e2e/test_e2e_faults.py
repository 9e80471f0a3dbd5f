"""Worker faults: a worker killed outright is given up and its job lost; a restarted one finds its jobs."""

from __future__ import annotations

import os
import signal

import pytest

from conftest import read_pid, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_killed_worker_is_unavailable_and_its_job_lost(make_cluster):
    cluster, xce = make_cluster(workers=2, slots=1, worker_timeout=3.0)
    jobid = xce.submit("--", "sh", "-c", "echo $$ > lost.pid; exec sleep 60")
    job = xce.wait_state(jobid, "RUN", 20)
    victim = job["placement"][0]["host"]
    orphan = read_pid(xce.cwd / "lost.pid")
    try:
        cluster.kill(victim, signal.SIGKILL)
        wait_for(lambda: {h["name"]: h["status"] for h in cluster.hosts()}[victim] == "unavail", 15,
                 f"{victim} to be marked unavailable")
        lost = xce.wait_state(jobid, "EXIT", 10)
        assert "lost" in lost["reason"] and victim in lost["reason"], lost["reason"]

        after = xce.submit("--", "sh", "-c", "echo still here")
        done = xce.wait_state(after, "DONE", 20)
        assert done["placement"][0]["host"] != victim
        assert (xce.cwd / f"xce-{after}.out").read_text() == "still here\n"
    finally:
        _kill_quietly(orphan)


def test_restarted_worker_adopts_its_running_job(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=2)
    name = cluster.worker_names[0]
    long = xce.submit("--", "sh", "-c", "echo $$ > long.pid; exec sleep 4")
    short = xce.submit("--", "sh", "-c", "echo $$ > short.pid; exec sleep 0.5")
    xce.wait_state(long, "RUN", 20)
    xce.wait_state(short, ("RUN", "DONE"), 20)
    pid = read_pid(xce.cwd / "long.pid")
    try:
        cluster.kill(name, signal.SIGKILL)
        wait_for(lambda: not os.path.exists(f"/proc/{read_pid(xce.cwd / 'short.pid')}/cmdline")
                 or open(f"/proc/{read_pid(xce.cwd / 'short.pid')}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                 10, "the short job to end while its worker is down")
        cluster.start_worker(name)
        # The short job ended unseen: reported gone at re-registration (unless it was reported before the kill).
        gone = xce.wait_state(short, ("EXIT", "DONE"), 20)
        if gone["state"] == "EXIT":
            assert "lost" in gone["reason"], gone["reason"]
        # The long job was adopted: still RUN after the re-registration, then its end is noticed.
        assert xce.job(long)["state"] == "RUN"
        ended = xce.wait_state(long, ("EXIT", "DONE"), 20)
        assert "unknown" in ended["reason"], ended["reason"]
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
