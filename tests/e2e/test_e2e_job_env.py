"""On a live personal cluster: Slurm's task variables, the warning before the run limit, output open modes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import FAST

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One personal cluster of two workers with two slots each for the whole module."""
    c = LocalCluster(tmp_path_factory.mktemp("jobenv") / "state", 2, 2, **FAST)
    c.start()
    yield c
    c.stop()


def _wait(cluster, jobid: int, timeout: float = 40.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = cluster.request("GET", f"/v1/jobs/{jobid}")
        if job["state"] in ("DONE", "EXIT"):
            return job
        assert time.monotonic() < deadline, f"job {jobid} is still {job['state']} ({job['reason']})"
        time.sleep(0.1)


def _submit(cluster, cwd: Path, **body) -> int:
    return cluster.request("POST", "/v1/jobs", {"cwd": str(cwd), **body})["jobid"]


def test_every_task_of_xce_launch_is_a_slurm_task(cluster, tmp_path):
    launch = f"{sys.executable} -m xce.cli.main launch"
    script = (f"{launch} sh -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURMD_NODENAME $SLURM_NTASKS "
              f"$SLURM_JOB_ID' | sort")
    jobid = _submit(cluster, tmp_path, command=["sh", "-c", script], tasks=4, request="span[ptile=2]",
                    stdout="tasks.out", env=cluster.env())
    job = _wait(cluster, jobid)
    assert job["state"] == "DONE", job["reason"]
    first, second = (p["host"] for p in job["placement"])
    rows = [line.split() for line in (tmp_path / "tasks.out").read_text().splitlines()]
    assert rows == [["0", "0", "0", first, "4", str(jobid)], ["1", "1", "0", first, "4", str(jobid)],
                    ["2", "0", "1", second, "4", str(jobid)], ["3", "1", "1", second, "4", str(jobid)]]


def test_the_warning_signal_comes_before_the_run_limit(cluster, tmp_path):
    # To every process of the job: the inner shell hears it too.
    everyone = _submit(cluster, tmp_path, command=["sh", "-c", "trap 'echo outer' USR2; sh -c \"trap 'echo inner; "
                                                   "exit 0' USR2; sleep 30 & wait\" & wait; wait"],
                       run_limit=30, warn_signal="USR2", warn_time=28, stdout="all.out")
    # B: only to the batch shell: its child keeps running until the shell ends it.
    shell_only = _submit(cluster, tmp_path, command=["sh", "-c", "trap 'kill -0 $child && echo child-alive; kill "
                                                     "$child' USR1; sleep 30 & child=$!; wait; wait"],
                         run_limit=30, warn_signal="SIGUSR1", warn_time=28, warn_batch_only=True, stdout="b.out")
    # A job that runs a step (srun, xce launch): the step hears it, the batch shell waiting for it does not
    # (it traps nothing and would die of it), as Slurm does without B:.
    step = (f"{sys.executable} -m xce.cli.main launch sh -c \"trap 'echo step; exit 0' USR2; sleep 30 & wait\"; "
            f"echo shell-alive")
    steps = _submit(cluster, tmp_path, command=["sh", "-c", step], run_limit=30, warn_signal="USR2", warn_time=27,
                    stdout="steps.out", env=cluster.env())
    started = time.monotonic()
    for jobid in (everyone, shell_only, steps):
        job = _wait(cluster, jobid, timeout=25)
        assert job["state"] == "DONE", job["reason"]
    assert time.monotonic() - started < 20, "the warning did not come before the run limit"
    assert sorted((tmp_path / "all.out").read_text().split()) == ["inner", "outer"]
    assert (tmp_path / "b.out").read_text().split() == ["child-alive"]
    assert (tmp_path / "steps.out").read_text().split() == ["step", "shell-alive"]
    shown = cluster.request("GET", f"/v1/jobs/{everyone}")
    assert shown["state"] == "DONE"


def test_output_is_truncated_or_appended_as_asked(cluster, tmp_path):
    for name in ("kept.out", "fresh.out"):
        (tmp_path / name).write_text("earlier run\n")
    appended = _submit(cluster, tmp_path, command=["echo", "this run"], stdout="kept.out")
    truncated = _submit(cluster, tmp_path, command=["echo", "this run"], stdout="fresh.out", open_mode="truncate")
    for jobid in (appended, truncated):
        assert _wait(cluster, jobid)["state"] == "DONE"
    assert (tmp_path / "kept.out").read_text() == "earlier run\nthis run\n"
    assert (tmp_path / "fresh.out").read_text() == "this run\n"


def test_a_bad_warning_is_refused_at_submission(cluster, tmp_path):
    with httpx.Client(base_url=cluster.url, headers={"Authorization": f"Bearer {cluster.token('admin')}"}) as http:
        r = http.post("/v1/jobs", json={"command": ["true"], "cwd": str(tmp_path), "warn_signal": "SIGWHAT",
                                         "warn_time": 10})
        assert r.status_code == 422 and "unknown signal 'SIGWHAT'" in r.text
        r = http.post("/v1/jobs", json={"command": ["true"], "cwd": str(tmp_path), "warn_signal": "USR1"})
        assert r.status_code == 422 and "give warn_signal and warn_time together" in r.text


def test_jobs_l_says_where_and_how_the_job_runs(cluster, tmp_path):
    import subprocess

    host = cluster.worker_names[1]
    args = ["submit", "-x", "-m", host, "--signal=B:USR2@30", "-W", "5", "--open-mode", "truncate",
            "--record", "comment=nightly run", "-H", "-o", "out.%j", "--", "true"]
    run = lambda *a: subprocess.run([sys.executable, "-m", "xce.cli.main", *a], env=cluster.env(),  # noqa: E731
                                    cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    jobid = run(*args).split("<")[1].split(">")[0]
    shown = run("jobs", "-l", jobid)
    for line in ("Exclusive: no other job on its hosts", f"Hosts: {host}",
                 "Warning: SIGUSR2 to its script's shell 30s before the run limit",
                 "Output files: truncated at the start", "Recorded (no effect here): comment=nightly run"):
        assert line in shown, shown
    run("kill", jobid)
