"""On a live cluster of three workers: exclusive jobs never share a host, host lists and host groups
place jobs only where they say, an unknown host is refused at submission, a job held to a closed
host says so, and ``nodes`` spreads a job over exactly that many hosts. Jobs are submitted through
the REST API with the body fields (``exclusive``, ``hosts``, ``exclude_hosts``, ``nodes``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FAST

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration]

HOSTS = ("pl-w1", "pl-w2", "pl-w3")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Three workers of two slots each, with a host group ``pair`` of the last two."""
    base = tmp_path_factory.mktemp("placement")
    config = base / "xce.toml"
    config.write_text('[host_groups]\npair = ["pl-w2", "pl-w3"]\n')
    c = LocalCluster(base / "state", 3, 2, config=config, host_prefix="pl", **FAST)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def submit(cluster: LocalCluster, cwd: Path, **body) -> int:
    return cluster.request("POST", "/v1/jobs", {"cwd": str(cwd), **body})["jobid"]


def refused(cluster: LocalCluster, cwd: Path, **body) -> str:
    """The 422 answer's messages for a submission that must be refused."""
    with cluster.session(cluster.token("admin")) as http:
        r = http.request("POST", "/v1/jobs", json={"command": ["true"], "cwd": str(cwd), **body})
    assert r.status_code == 422, r.text
    return " | ".join(e["msg"] for e in r.json()["detail"])


def job(cluster: LocalCluster, jobid: int) -> dict:
    return cluster.request("GET", f"/v1/jobs/{jobid}")


def wait_done(cluster: LocalCluster, jobids: list[int], timeout: float = 90.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = [job(cluster, j) for j in jobids]
        if all(j["state"] in ("DONE", "EXIT") for j in jobs):
            for j in jobs:
                assert j["state"] == "DONE", (j["jobid"], j["reason"])
            return jobs
        late = [(j["jobid"], j["state"], j["pend_reasons"]) for j in jobs if j["state"] not in ("DONE", "EXIT")]
        assert time.monotonic() < deadline, f"jobs still not done: {late}"
        time.sleep(0.2)


def hosts_of(j: dict) -> set[str]:
    return {p["host"] for p in j["placement"]}


def test_an_exclusive_job_never_shares_a_host(cluster, tmp_path):
    sleep = lambda s: ["sleep", str(s)]  # noqa: E731
    plan = [(sleep(3), 1, False), (sleep(2), 1, True), (sleep(2), 2, False), (sleep(2), 1, True),
            (sleep(1), 1, False), (sleep(2), 1, True), (sleep(1), 2, False), (sleep(1), 1, False),
            (sleep(1), 1, True)]
    ids = [submit(cluster, tmp_path, command=cmd, tasks=tasks, exclusive=ex) for cmd, tasks, ex in plan]
    jobs = wait_done(cluster, ids)
    exclusive = {j["jobid"] for j, (_, _, ex) in zip(jobs, plan) if ex}
    for a in jobs:
        if a["jobid"] not in exclusive:
            continue
        assert len(hosts_of(a)) == 1
        for b in jobs:
            if b is a or not hosts_of(a) & hosts_of(b):
                continue
            # b ran on a's host: wholly before a started or after a ended.
            assert b["end_time"] <= a["start_time"] or b["start_time"] >= a["end_time"], (a, b)
    # Exclusive jobs did run side by side with others on the cluster: just not on one host.
    starts = sorted((j["start_time"], j["end_time"], j["jobid"]) for j in jobs)
    assert any(s2 < e1 for (s1, e1, j1), (s2, _, j2) in zip(starts, starts[1:]) if j1 in exclusive or j2 in exclusive)


def test_a_host_group_and_an_exclude_list_place_only_where_they_say(cluster, tmp_path):
    in_pair = [submit(cluster, tmp_path, command=["sleep", "1"], hosts=["pair"]) for _ in range(4)]
    not_12 = [submit(cluster, tmp_path, command=["true"], exclude_hosts=["pl-w1", "pl-w2"]) for _ in range(2)]
    named = submit(cluster, tmp_path, command=["true"], hosts=["pl-w1"], tasks=2)
    jobs = wait_done(cluster, [*in_pair, *not_12, named])
    for j in jobs[:4]:
        assert hosts_of(j) <= {"pl-w2", "pl-w3"}
    for j in jobs[4:6]:
        assert hosts_of(j) == {"pl-w3"}
    assert jobs[6]["placement"] == [{"host": "pl-w1", "tasks": 2}]
    detail = job(cluster, in_pair[0])
    assert detail["request"] == ""  # the user's text stays as written
    assert detail["sched_request"] == 'select[hname == "pl-w2" || hname == "pl-w3"]'


def test_an_unknown_host_or_an_inexpressible_spread_is_refused_naming_it(cluster, tmp_path):
    msg = refused(cluster, tmp_path, hosts=["pl-w1", "nosuch"])
    assert 'unknown host or host group "nosuch"' in msg and "groups: pair" in msg
    assert 'unknown host or host group "gpu"' in refused(cluster, tmp_path, exclude_hosts=["gpu"])
    assert "excludes every host the job may run on (pl-w2, pl-w3)" in refused(
        cluster, tmp_path, hosts=["pair"], exclude_hosts=["pl-w2", "pl-w3"])
    assert "3 hosts but only 2 task(s)" in refused(cluster, tmp_path, tasks=2, nodes=3)
    assert "cannot be spread over exactly 3 hosts" in refused(cluster, tmp_path, tasks=4, nodes=3)
    # Four tasks held to one two-slot host can never run: refused, not left pending forever.
    assert "can never run on this cluster" in refused(cluster, tmp_path, tasks=4, hosts=["pl-w1"])


def test_nodes_spreads_a_job_over_exactly_that_many_hosts(cluster, tmp_path):
    spread = submit(cluster, tmp_path, command=["true"], tasks=4, nodes=2)
    whole = submit(cluster, tmp_path, command=["true"], tasks=2, nodes=2, exclusive=True)
    a, b = wait_done(cluster, [spread, whole])
    assert sorted(p["tasks"] for p in a["placement"]) == [2, 2]
    assert sorted(p["tasks"] for p in b["placement"]) == [1, 1]


def test_a_job_held_to_a_closed_host_says_which_and_runs_once_it_opens(cluster, tmp_path):
    cluster.request("POST", "/v1/admin/hosts/pl-w1/close", {"reason": "maintenance"})
    try:
        jobid = submit(cluster, tmp_path, command=["true"], hosts=["pl-w1"])
        deadline = time.monotonic() + 30
        while True:
            j = job(cluster, jobid)
            texts = [r["text"] for r in j["pend_reasons"]]
            if any("pl-w1 is closed" in t for t in texts):
                break
            assert j["state"] == "PEND" and time.monotonic() < deadline, (j["state"], texts)
            time.sleep(0.2)
        assert texts == ['no available host matches select[hname == "pl-w1"]; matching host(s): pl-w1 is closed']
    finally:
        cluster.request("POST", "/v1/admin/hosts/pl-w1/open", {})
    (done,) = wait_done(cluster, [jobid])
    assert hosts_of(done) == {"pl-w1"}


def test_a_host_running_an_exclusive_job_shows_full_and_closed_to_others(cluster, tmp_path):
    jobid = submit(cluster, tmp_path, command=["sleep", "4"], tasks=1, exclusive=True)
    deadline = time.monotonic() + 30
    while job(cluster, jobid)["state"] != "RUN":
        assert time.monotonic() < deadline, job(cluster, jobid)
        time.sleep(0.1)
    (host,) = hosts_of(job(cluster, jobid))
    shown = {h["name"]: h for h in cluster.request("GET", "/v1/hosts")["hosts"]}[host]
    assert shown["exclusive_job"] == jobid and shown["slots_used"] == 2 and shown["njobs"] == 1
    out = subprocess.run([sys.executable, "-m", "xce.cli.main", "hosts"], env=cluster.env(), capture_output=True,
                         text=True, check=True).stdout
    assert any(line.split()[0] == host and f"closed_Excl (job {jobid})" in line for line in out.splitlines()), out
    wait_done(cluster, [jobid])
    shown = {h["name"]: h for h in cluster.request("GET", "/v1/hosts")["hosts"]}[host]
    assert shown["exclusive_job"] is None


def test_a_new_requirement_keeps_the_host_list(cluster, tmp_path):
    jobid = submit(cluster, tmp_path, command=["true"], hosts=["pl-w3"], hold=True)
    cluster.request("PATCH", f"/v1/jobs/{jobid}", {"request": "rusage[mem=10M]"})
    shown = job(cluster, jobid)
    assert shown["request"] == "rusage[mem=10M]" and 'hname == "pl-w3"' in shown["sched_request"]
    cluster.request("POST", "/v1/jobs/act", {"action": "release", "jobs": [str(jobid)]})
    (done,) = wait_done(cluster, [jobid])
    assert hosts_of(done) == {"pl-w3"}
