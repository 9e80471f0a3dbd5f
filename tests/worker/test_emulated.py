"""Emulated hosts (``xce emulate-hosts``): a real controller and scheduler see 200 hosts from one
process, dispatch jobs onto them, see them finish, and see the hosts go when the process dies."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

import pytest

from xce.cluster import LocalCluster
from xce.testing.wait import wait_for

HOSTS = 200
WORKER_TIMEOUT = 3.0


@pytest.fixture
def fleet(tmp_path):
    cluster = LocalCluster(tmp_path / "state", 0, round_interval=0.05, worker_timeout=WORKER_TIMEOUT)
    cluster.start()
    try:
        cluster._spawn("emulator", ["xce.cli.main", "emulate-hosts", str(HOSTS), "--prefix", "emu", "--slots", "2",
                                    "--state-dir", str(cluster.state_dir)])
        wait_for(lambda: _ok_hosts(cluster) == HOSTS, 60, f"{HOSTS} emulated hosts to register")
        yield cluster
    finally:
        cluster.stop()


def _ok_hosts(cluster: LocalCluster) -> int:
    return sum(h["status"] == "ok" for h in cluster.hosts())


def xce(cluster: LocalCluster, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", *args], env=cluster.env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def jobs(cluster: LocalCluster) -> list[dict]:
    return json.loads(xce(cluster, "jobs", "-a", "--json"))["jobs"]


@pytest.mark.slow
def test_jobs_dispatch_onto_emulated_hosts_run_their_time_and_finish(fleet):
    # 400 jobs on 200 hosts of 2 slots: every slot of the fleet is taken at once
    xce(fleet, "submit", "-J", "wide[1-400]", "--", "sleep", "2")
    running = wait_for(lambda: (js := jobs(fleet)) and all(j["state"] == "RUN" for j in js) and js, 60,
                       "all 400 jobs to run")
    per_host = Counter(p["host"] for j in running for p in j["placement"])
    assert len(per_host) == HOSTS and set(per_host.values()) == {2}  # every emulated host, each slot
    assert all(h.startswith("emu") for h in per_host)
    ran = time.monotonic()
    ended = wait_for(lambda: (js := jobs(fleet)) and all(j["state"] == "DONE" for j in js) and js, 60,
                     "all 400 jobs to finish")
    assert len(ended) == 400 and all(j["exit_code"] == 0 for j in ended)
    # they "ran" their `sleep 2`: none was reported finished at once
    assert time.monotonic() - ran >= 1.0
    # the fleet is idle, its one poll waiting (25 s): a new job's start wakes it at once
    time.sleep(1.0)
    jobid = json.loads(xce(fleet, "submit", "--json", "--", "sleep", "0"))["jobid"]
    submitted = time.monotonic()
    wait_for(lambda: json.loads(xce(fleet, "jobs", "-l", "--json", str(jobid)))["jobs"][0]["state"] == "DONE", 20,
             f"job {jobid} to run and finish")
    assert time.monotonic() - submitted < 10


@pytest.mark.slow
def test_hosts_of_a_killed_emulator_go_unreachable_and_their_jobs_unknown(fleet):
    xce(fleet, "submit", "-J", "long[1-10]", "--", "sleep", "600")
    wait_for(lambda: (js := jobs(fleet)) and all(j["state"] == "RUN" for j in js), 60, "the jobs to run")
    fleet.kill("emulator")
    killed = time.monotonic()
    wait_for(lambda: all(h["status"] == "unreach" for h in fleet.hosts()), WORKER_TIMEOUT + 10,
             "every emulated host to be declared unreachable")
    # declared within the worker timeout, plus the liveness check's period and the CLI's own time
    assert time.monotonic() - killed <= WORKER_TIMEOUT + 5
    wait_for(lambda: all(j["state"] == "UNKWN" for j in jobs(fleet)), 30, "the jobs to be UNKWN")


def test_a_per_host_worker_token_cannot_poll_or_report_for_another_host(tmp_path):
    cluster = LocalCluster(tmp_path / "state", 0, round_interval=0.05)
    cluster.start()
    try:
        issued = cluster.request("POST", "/v1/admin/tokens", {"name": "emu0001", "role": "worker"})
        with cluster.session(issued["token"]) as http:
            reg = http.post("/v1/workers/register-many", json={"hosts": [
                {"name": "emu0001", "resources": {"slots": 1}}]})
            assert reg.status_code == 200, reg.text
            # its own host: answered
            mine = http.post("/v1/workers/poll", json={"hosts": ["emu0001"], "wait": 0})
            assert mine.status_code == 200 and mine.json()["actions"] == []
            # another host's actions, beats and registration: refused, naming the host
            for path, body in [("/v1/workers/poll", {"hosts": ["emu0001", "emu0002"], "wait": 0}),
                               ("/v1/workers/heartbeat", {"alive": ["emu0002"]}),
                               ("/v1/workers/reports", {"hosts": {"emu0002": [{"jobid": 1, "status": "started"}]}}),
                               ("/v1/workers/register-many", {"hosts": [{"name": "emu0002"}]})]:
                r = http.post(path, json=body)
                assert r.status_code == 403 and "emu0002" in r.text, (path, r.status_code, r.text)
            r = http.get("/v1/workers/emu0002/actions", params={"wait": 0})
            assert r.status_code == 403, r.text
    finally:
        cluster.stop()
