"""Fencing by run: a job the controller records lost never starts afterwards, and what is left of a
requeued job's old run never ends its new run. Each job's command notes when it starts (and, for
the requeued one, when a run of it completes), so the tests see what a site would see: a side
effect of a job the controller says did not run, or a rerun killed by its own past."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: The command notes its start (nanoseconds) in started.<jobid>, then runs long enough to be there.
NOTED = 'date +%s%N >> "started.$XCE_JOBID"; exec sleep 60'
#: A first run that outlives the test's faults; every later run is short and notes that it completed.
RERUN = ('if [ -e "runs.$XCE_JOBID" ]; then s=1; else s=120; fi; date +%s%N >> "runs.$XCE_JOBID"; '
         'sleep $s && echo ok >> "ends.$XCE_JOBID"')


def _job(cluster, jobid: int) -> dict:
    return cluster.request("GET", f"/v1/jobs/{jobid}")


def _admin(cluster, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "xce.cli.admin", *args], env=cluster.env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _lost_at(job: dict) -> int | None:
    """When the controller recorded the job lost (ns), if it did."""
    return next((h["ts"] for h in job["history"] if h["to"] == "EXIT" and h["reason"].startswith("lost")), None)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_a_job_recorded_lost_after_its_worker_was_killed_right_after_the_dispatch_never_starts(make_cluster, request,
                                                                                             store):
    """20 SIGKILLs of a worker the moment the controller has dispatched three jobs to it. Whatever
    the moment, each job is adopted (its command started, even by the spawner after the worker
    died, and runs on) or recorded lost, and the command of a job recorded lost never starts (before
    this fix, the restarted worker fetched the lost job's start again and ran it 0.1-0.4 s after the
    decision, and a job its spawner started as the worker died was killed and recorded lost)."""
    db = request.getfixturevalue("pg_url") if store == "postgresql" else None
    cluster, xce = make_cluster(workers=1, slots=3, worker_timeout=30.0, db=db)
    name = cluster.worker_names[0]
    lost: dict[int, int] = {}
    for i in range(20):
        first = xce.submit("-J", f"k{i}[1-3]", "--", "sh", "-c", NOTED)
        ids = [first + k for k in range(3)]
        wait_for(lambda: any(_job(cluster, j)["state"] == "RUN" for j in ids), 30, f"round {i}'s jobs to be dispatched")
        cluster.kill(name, signal.SIGKILL)
        cluster.start_worker(name)
        # Settled: every job is lost, or runs with its command started (adopted by the restarted worker).
        wait_for(lambda: all((j := _job(cluster, jid))["state"] in ("EXIT", "DONE")
                             or (j["state"] == "RUN" and (xce.cwd / f"started.{jid}").exists())
                             for jid in ids), 60, f"round {i}'s jobs to be lost or running again")
        for jid in ids:
            job = _job(cluster, jid)
            if job["state"] == "RUN":
                cluster.request("POST", f"/v1/jobs/{jid}/kill")
            elif _lost_at(job) is not None:
                lost[jid] = _lost_at(job)
        wait_for(lambda: all(_job(cluster, j)["state"] in ("EXIT", "DONE") for j in ids), 30,
                 f"round {i}'s jobs to end")
    # The last worker has carried out every action queued before this one (actions go in order).
    probe = xce.submit("--", "true")
    xce.wait_state(probe, "DONE", 30)
    assert lost, "no kill came before a job's start: the test proved nothing"
    ran = {}
    for jid, at in lost.items():
        marker = xce.cwd / f"started.{jid}"
        if marker.exists():
            ran[jid] = [round((int(t) - at) / 1e9, 3) for t in marker.read_text().split()]
    assert not ran, f"{len(ran)} of {len(lost)} jobs recorded lost ran (their starts, s after the decision): {ran}"


def _requeued_once_and_done(cluster, xce, jobid: int, name: str) -> None:
    done = xce.wait_state(jobid, ("DONE", "EXIT"), 60)
    moves = [f"{h['from']} -> {h['to']}: {h['reason']}" for h in _job(cluster, jobid)["history"]]
    assert done["state"] == "DONE" and done["exit_code"] == 0, moves
    assert not any("must not run" in m for m in moves), moves
    # One run completed: the first was ended by the requeue, the second ran to its end.
    assert (xce.cwd / f"ends.{jobid}").read_text().split() == ["ok"], moves
    assert len((xce.cwd / f"runs.{jobid}").read_text().split()) == 2, moves
    assert done["placement"][0]["host"] == name


def test_a_rerunnable_job_requeued_off_a_stopped_worker_runs_again_there_once_and_ends_done(make_cluster):
    """``kill -STOP`` the worker until its job is UNKWN, ``host down --requeue``, ``kill -CONT``: the
    worker's news of the old run is answered for that run only, so the job, dispatched to the same
    host again, is not killed by its own past (before this fix: RUN -> EXIT "job N must not run on H")."""
    cluster, xce = make_cluster(workers=1, slots=1, worker_timeout=3.0)
    name = cluster.worker_names[0]
    jobid = xce.submit("--rerunnable", "-m", name, "--", "sh", "-c", RERUN)
    xce.wait_state(jobid, "RUN", 20)
    wait_for(lambda: (xce.cwd / f"runs.{jobid}").exists(), 20, "the first run to start")
    cluster.kill(name, signal.SIGSTOP)
    try:
        xce.wait_state(jobid, "UNKWN", 20)
        out = _admin(cluster, "host", "down", name, "--requeue")
        assert f"Requeued (rerunnable): {jobid}" in out, out
        assert xce.job(jobid)["state"] == "PEND"
    finally:
        cluster.kill(name, signal.SIGCONT)
    _requeued_once_and_done(cluster, xce, jobid, name)


def test_a_rerunnable_job_requeued_off_a_live_worker_runs_again_there_once_and_ends_done(make_cluster):
    """``host down --requeue`` of a host whose worker never stopped: it keeps reporting the old run,
    which is stopped, and the job's new run on the same host is left alone."""
    cluster, xce = make_cluster(workers=1, slots=1, worker_timeout=3.0)
    name = cluster.worker_names[0]
    jobid = xce.submit("--rerunnable", "-m", name, "--", "sh", "-c", RERUN)
    xce.wait_state(jobid, "RUN", 20)
    wait_for(lambda: (xce.cwd / f"runs.{jobid}").exists(), 20, "the first run to start")
    out = _admin(cluster, "host", "down", name, "--requeue")
    assert f"Requeued (rerunnable): {jobid}" in out, out
    _requeued_once_and_done(cluster, xce, jobid, name)
