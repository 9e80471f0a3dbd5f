"""What a site trying XCE found broken (issue 36), on one live cluster of two workers: a requeued
job's new run on the host that comes back, a cluster export with queue hooks, removing a host."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import FAST, Cli, read_pid, wait_for

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HOOK = "#!/bin/sh\ncat > /dev/null\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("site")
    (base / "work").mkdir()
    hook = base / "stop-hook"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    (base / "xce.toml").write_text(f'cluster_name = "site"\n[queues.normal]\n[queues.normal.hooks]\nstop = "{hook}"\n')
    cluster = LocalCluster(base / "state", 2, 2, config=base / "xce.toml", worker_timeout=3.0, **FAST)
    try:
        cluster.start()
        yield cluster, Cli(cluster, base / "work")
    finally:
        cluster.stop()


def admin(cluster, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "xce.cli.admin", *args], env=cluster.env(), capture_output=True,
                       text=True, timeout=120)
    assert not check or r.returncode == 0, r.stdout + r.stderr
    return r


def status(cluster, name: str) -> str | None:
    return {h["name"]: h["status"] for h in cluster.hosts()}.get(name)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_quietly(pid: int | None) -> None:
    try:
        if pid:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_requeued_job_placed_again_on_its_returning_host_keeps_its_new_run(site):
    """The returning worker still ran the job's first run: killing that must not end the second."""
    cluster, xce = site
    victim, spare = cluster.worker_names
    admin(cluster, "host", "close", spare, "--reason", "only the victim")
    old = new = None
    try:
        jobid = xce.submit("--rerunnable", "--", "sh", "-c", "echo $$ >> runs.pid; sleep 60")
        assert xce.wait_state(jobid, "RUN", 20)["placement"][0]["host"] == victim
        old = read_pid(xce.cwd / "runs.pid")
        cluster.kill(victim, signal.SIGKILL)
        xce.wait_state(jobid, "UNKWN", 20)
        admin(cluster, "host", "down", victim, "--requeue")
        assert xce.wait_state(jobid, "PEND", 10)["reason"].startswith("requeued")
        cluster.start_worker(victim)
        again = xce.wait_state(jobid, ("RUN", "EXIT", "DONE"), 30)
        assert again["state"] == "RUN" and again["placement"][0]["host"] == victim, again["history"]
        new = wait_for(lambda: len(pids := (xce.cwd / "runs.pid").read_text().split()) == 2 and int(pids[1]), 15,
                       "the second run to start")
        time.sleep(3)  # long enough for a stale kill of the first run to arrive
        job = xce.job(jobid)
        assert job["state"] == "RUN", job["history"]
        assert alive(new) and not alive(old)
        xce("kill", str(jobid))
        xce.wait_state(jobid, "EXIT", 20)
    finally:
        kill_quietly(old)
        kill_quietly(new)
        admin(cluster, "host", "open", spare, check=False)


def test_cluster_export_and_whatif_work_when_a_queue_has_hooks(site, tmp_path):
    """Hooks are executables on the controller's host: a simulation runs none, so they stay out."""
    from xce.sim.cluster_file import load_cluster_file

    cluster, xce = site
    xce.wait_state(xce.submit("--", "true"), "DONE", 30)
    out = tmp_path / "cluster.toml"
    xce("cluster", "export", "-o", str(out))
    assert "hooks" not in out.read_text()
    assert [q.name for q in load_cluster_file(out).config.queues] == ["normal"]
    r = xce("whatif", "--since", "1h", "--hosts", "+1", "--json")
    assert json.loads(r.stdout)["baseline"]["all"]["jobs"] >= 1


def test_a_decommissioned_host_is_removed_and_counts_as_capacity_no_more(site, tmp_path):
    """Refused while a job holds it or its worker reports; once removed, gone everywhere."""
    cluster, xce = site
    victim, spare = cluster.worker_names
    xce.wait_state(xce.submit("-n", "4", "--", "true"), "DONE", 30)  # 2 hosts x 2 slots
    r = admin(cluster, "host", "remove", spare, check=False)
    assert r.returncode == 1 and f"host {spare} still reports" in r.stderr and len(r.stderr.splitlines()) == 1
    pid = None
    try:
        jobid = xce.submit("-m", spare, "--", "sh", "-c", "echo $$ > held.pid; sleep 60")
        xce.wait_state(jobid, "RUN", 20)
        pid = read_pid(xce.cwd / "held.pid")
        cluster.kill(spare, signal.SIGKILL)
        xce.wait_state(jobid, "UNKWN", 20)
        r = admin(cluster, "host", "remove", spare, check=False)
        assert r.returncode == 1 and f"holds job(s) {jobid}" in r.stderr, r.stderr
        admin(cluster, "host", "down", spare)
        assert admin(cluster, "host", "remove", spare).stdout == f"Host {spare} is removed from the cluster.\n"
    finally:
        kill_quietly(pid)
    assert status(cluster, spare) is None and spare not in xce("hosts").stdout
    r = xce("submit", "-n", "4", "--", "true", check=False)
    assert r.returncode != 0 and "needs slots 4, short by slots 2 (the cluster has 2 slots on 1 host)" in r.stderr, r.stderr
    out = tmp_path / "cluster.toml"
    xce("cluster", "export", "-o", str(out))
    assert spare not in out.read_text()
    assert xce.wait_state(xce.submit("--", "true"), "DONE", 30)["placement"][0]["host"] == victim
    r = admin(cluster, "host", "remove", spare, check=False)
    assert r.returncode == 1 and f"worker {spare} is not registered" in r.stderr
