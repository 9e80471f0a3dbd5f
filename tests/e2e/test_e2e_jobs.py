"""Real jobs on a three-worker cluster: many short ones, failures, a parallel job, a memory limit."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import FAST, Cli, wait_for

from xce.cluster import LocalCluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    base = tmp_path_factory.mktemp("three")
    (base / "work").mkdir()
    cluster = LocalCluster(base / "state", 3, 2, **FAST)
    cluster.start()
    yield cluster, Cli(cluster, base / "work")
    cluster.stop()


@pytest.mark.slow
def test_two_hundred_jobs_and_a_failure(three):
    cluster, xce = three
    first = xce.submit("--array", "200", "--", "sh", "-c", "echo job $XCE_JOBID")
    failing = xce.submit("--", "sh", "-c", "exit 3")
    ids = list(range(first, first + 200))

    def finished():
        jobs = {j["jobid"]: j for j in xce.jobs()}
        return all(jobs.get(i, {}).get("state") in ("DONE", "EXIT") for i in [*ids, failing]) and jobs

    jobs = wait_for(finished, 120, "200 jobs to finish", interval=0.5)
    assert [i for i in ids if jobs[i]["state"] != "DONE"] == []
    assert all(jobs[i]["exit_code"] == 0 for i in ids)
    used = {j["placement"][0]["host"] for j in (jobs[i] for i in ids)}
    assert used == set(cluster.worker_names)
    for i in ids:
        assert (xce.cwd / f"xce-{i}.out").read_text() == f"job {i}\n"
    assert jobs[failing]["state"] == "EXIT"
    assert jobs[failing]["exit_code"] == 3


def test_parallel_job_spans_two_workers(three):
    cluster, xce = three
    jobid = xce.submit("-n", "4", "--", "sh", "-c", 'echo "$XCE_HOSTS"; sleep 1')
    job = xce.wait_state(jobid, "DONE", 30)
    hosts = {p["host"]: p["tasks"] for p in job["placement"]}
    assert len(hosts) == 2 and sum(hosts.values()) == 4
    seen = (xce.cwd / f"xce-{jobid}.out").read_text().split()
    assert sorted(seen) == sorted(f"{h}:{n}" for h, n in hosts.items())


def test_memory_limit_kills_the_job(three):
    cluster, xce = three
    hold = "b = bytearray(300 * 1024 * 1024); import time; time.sleep(20)"
    jobid = xce.submit("--limit", "mem=100M", "--", sys.executable, "-c", hold)
    job = xce.wait_state(jobid, "EXIT", 30)
    assert "limit 100M" in job["reason"] and "memory" in job["reason"], job["reason"]
    assert job["exit_signal"] == "SIGKILL"


def test_jobs_run_as_their_owner(make_cluster):
    """Without --run-as-self a root worker runs each job as its owner, and refuses owners it cannot run as."""
    import getpass
    import os

    cluster, xce = make_cluster(workers=1, slots=1, run_as_self=False)
    if os.getuid() != 0:
        mine = xce.submit("--", "sh", "-c", "id -un")
        assert xce.wait_state(mine, "DONE", 20)
        assert (xce.cwd / f"xce-{mine}.out").read_text().strip() == getpass.getuser()
        return
    # root's own submission is refused at once (allow_root_jobs is off), not accepted and then failed
    r = xce("submit", "--", "sh", "-c", "id -un", check=False)
    assert r.returncode != 0 and r.stdout == "", r
    assert r.stderr == "xce: root's jobs are not allowed on this cluster (allow_root_jobs = false in xce.toml): " \
                       "submit as an ordinary user\n", r.stderr
    assert xce.jobs() == []
    # The admin service token, which root's commands on a controller host fall back to, follows root's
    # rule: refused, where it once made a job owned by "admin" that failed on every worker.
    r = xce("submit", "--token", cluster.token("admin"), "--", "true", check=False)
    assert r.returncode != 0 and r.stdout == "", r
    assert r.stderr == "xce: the admin service token speaks for root, and root's jobs are not allowed on this " \
                       "cluster (allow_root_jobs = false in xce.toml): submit as an ordinary user\n", r.stderr
    assert xce.jobs() == []


def test_where_roots_jobs_are_allowed_they_run_as_root(make_cluster, tmp_path):
    """allow_root_jobs = true: root's submissions, and the admin service token's that root's commands on
    a controller host fall back to, run as root (`xce up --multi-user` gives its workers
    --allow-root-jobs); they once ended "user 'admin' does not exist on this host"."""
    import os

    if os.getuid() != 0:
        pytest.skip("root's jobs need the tests to run as root")  # the suite runs as root in CI
    config = tmp_path / "xce.toml"
    config.write_text("allow_root_jobs = true\n")
    cluster, xce = make_cluster(workers=1, slots=1, run_as_self=False, config=config)
    mine = xce.submit("--", "sh", "-c", "id -un")
    r = xce("submit", "--json", "--token", cluster.token("admin"), "--", "sh", "-c", "id -un")
    theirs = int(json.loads(r.stdout)["jobid"])
    for jobid in (mine, theirs):
        job = xce.wait_state(jobid, "DONE", 30)
        assert job["user"] == "root"
        assert (xce.cwd / f"xce-{jobid}.out").read_text().strip() == "root"
