"""The job workflow LSF and Slurm users expect, with real jobs on a three-worker, six-slot cluster:
holds, begin times, signals, names, and jobs that can never run."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from conftest import FAST, Cli, wait_for

from xce.cluster import LocalCluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def six(tmp_path_factory):
    base = tmp_path_factory.mktemp("six")
    (base / "work").mkdir()
    cluster = LocalCluster(base / "state", 3, 2, **FAST)
    cluster.start()
    yield cluster, Cli(cluster, base / "work")
    cluster.stop()


def _started(job) -> list[int]:
    return [h["ts"] for h in job["history"] if h["to"] == "RUN" and h["from"] != "RUN"]


def test_a_held_job_waits_until_released(six):
    _, xce = six
    jobid = xce.submit("-H", "-J", "waiter", "--", "true")
    time.sleep(2.0)  # many scheduling rounds (0.05 s apart) on an idle cluster
    job = xce.job(jobid)
    assert (job["state"], _started(job)) == ("PEND", [])
    assert job["pend_reasons"][0]["step"] == "held"
    released = time.time_ns()
    r = xce("release", "waiter")
    assert r.stdout == f"Job <{jobid}> is released.\n"
    job = xce.wait_state(jobid, "DONE", 30)
    assert _started(job)[0] >= released


def test_a_job_with_a_begin_time_does_not_start_before_it(six):
    _, xce = six
    before = time.time_ns()
    jobid = xce.submit("-b", "+3s", "--", "true")
    job = xce.job(jobid)
    assert job["state"] == "PEND" and job["pend_reasons"][0]["step"] == "begin"
    assert before + 3e9 <= job["begin_time"] <= time.time_ns() + 3e9
    job = xce.wait_state(jobid, "DONE", 30)
    assert _started(job)[0] >= job["begin_time"]


def test_kill_sends_the_signal_asked_for(six):
    _, xce = six
    script = ("import signal, sys, time\n"
              "signal.signal(signal.SIGUSR1, lambda *a: (print('got USR1', flush=True), sys.exit(7)))\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    jobid = xce.submit("--", sys.executable, "-c", script)
    xce.wait_state(jobid, "RUN", 30)
    out = xce.cwd / f"xce-{jobid}.out"
    wait_for(lambda: out.exists() and "ready" in out.read_text(), 30, "the job to install its handler")
    r = xce("kill", "-s", "USR1", str(jobid))
    assert r.stdout == f"Job <{jobid}> is sent SIGUSR1.\n"
    job = xce.wait_state(jobid, ("DONE", "EXIT"), 30)
    assert (job["state"], job["exit_code"]) == ("EXIT", 7)
    assert "got USR1" in out.read_text()
    assert any(h["reason"] == "SIGUSR1 sent by " + job["user"] for h in job["history"])


def test_a_job_that_can_never_run_is_refused(six):
    _, xce = six
    r = xce("submit", "-n", "100", "--", "true", check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "xce: the job can never run on this cluster: needs slots 100, short by slots 94 (the cluster has 6 slots on "
        "3 hosts); --allow-pending-forever submits it anyway"]
    r = xce("submit", "--request", "mem=100T", "--", "true", check=False)
    assert r.returncode == 1 and "can never run on this cluster: needs mem 100T, short by mem" \
        in r.stderr
    jobid = xce.submit("-n", "100", "--allow-pending-forever", "--", "true")
    job = wait_for(lambda: (j := xce.job(jobid))["pend_reasons"] and j, 30, "the scheduler's pend reason")
    assert job["pend_reasons"][0]["text"] == "cannot run on the current cluster: needs slots 100, short by slots 94 " \
        "(the cluster has 6 slots on 3 hosts)"
    xce("kill", str(jobid))


def test_an_array_of_20_with_limit_3_never_runs_more_than_3_at_once(six):
    _, xce = six
    out = json.loads(xce("submit", "--json", "-J", "lim[1-20]%3", "-o", "arr.%J.%I", "--", "sh", "-c",
                         "echo $XCE_ARRAY_INDEX; sleep 0.3").stdout)
    array = out["jobid"]
    assert (out["count"], out["array_limit"], out["indexes"]) == (20, 3, list(range(1, 21)))

    def done():
        jobs = json.loads(xce("jobs", "--json", "-a", str(array)).stdout)["jobs"]
        return len(jobs) == 20 and all(j["state"] == "DONE" for j in jobs) and jobs

    jobs = wait_for(done, 120, "the array to finish", interval=0.5)
    assert sorted(j["array_index"] for j in jobs) == list(range(1, 21))
    # From every element's own history: +1 when it started, -1 when it ended; never above 3.
    moves = []
    for j in jobs:
        for h in xce.job(j["jobid"])["history"]:
            if h["to"] == "RUN":
                moves.append((h["ts"], 1))
            elif h["to"] in ("DONE", "EXIT") and h["from"] in ("RUN", "SSUSP", "USUSP"):
                moves.append((h["ts"], -1))
    running = peak = 0
    for _, step in sorted(moves, key=lambda m: (m[0], m[1])):  # at one instant, an end before a start
        running += step
        peak = max(peak, running)
    assert peak == 3, peak  # the cluster has 6 slots: only the limit kept it at 3
    for j in jobs:
        assert (xce.cwd / f"arr.{array}.{j['array_index']}").read_text() == f"{j['array_index']}\n"


def _span(job) -> tuple[int, int]:
    run = [h["ts"] for h in job["history"] if h["to"] == "RUN"]
    end = [h["ts"] for h in job["history"] if h["to"] in ("DONE", "EXIT")]
    return run[0], end[-1]


def test_a_three_job_pipeline_runs_in_order_and_a_failed_step_stops_it(six):
    _, xce = six
    a = xce.submit("-J", "pipe_a", "--", "sh", "-c", "sleep 0.5; echo a > pipe.txt")
    b = xce.submit("-J", "pipe_b", "-w", "done(pipe_a)", "--", "sh", "-c", "sleep 0.5; echo b >> pipe.txt")
    c = xce.submit("--dependency", f"afterok:{b}", "--", "sh", "-c", "echo c >> pipe.txt")
    jobs = [xce.wait_state(j, "DONE", 60) for j in (a, b, c)]
    (a_run, a_end), (b_run, b_end), (c_run, _) = map(_span, jobs)
    assert a_end <= b_run and b_end <= c_run
    assert (xce.cwd / "pipe.txt").read_text() == "a\nb\nc\n"

    bad = xce.submit("-J", "pipe_bad", "--", "sh", "-c", "exit 3")
    after = xce.submit("-w", "done(pipe_bad)", "--", "true")
    xce.wait_state(bad, "EXIT", 30)
    job = wait_for(lambda: "never" in (j := xce.job(after))["pend_reasons"][0]["text"] and j, 30,
                   "the dependent job's reason")
    assert job["state"] == "PEND" and _started(job) == []
    assert job["pend_reasons"] == [{"step": "depend", "text": f"dependency can never be met: done({bad}): job {bad} "
                                    f"ended EXIT (`xce kill --orphans` removes such jobs)"}]
    r = xce("kill", "--orphans")
    assert r.stdout == f"Job <{after}> is killed.\n"


def test_requeue_runs_a_done_job_again_with_its_history(six):
    _, xce = six
    jobid = xce.submit("--", "sh", "-c", "echo run >> requeued.txt")
    xce.wait_state(jobid, "DONE", 30)
    r = xce("requeue", str(jobid))
    assert r.stdout == f"Job <{jobid}> is requeued.\n"
    job = wait_for(lambda: (j := xce.job(jobid))["state"] == "DONE" and len(_started(j)) == 2 and j, 30,
                   "the second run")
    assert (xce.cwd / "requeued.txt").read_text() == "run\nrun\n"
    moves = [(h["from"], h["to"]) for h in job["history"]]
    assert moves == [(None, "PEND"), ("PEND", "RUN"), ("RUN", "DONE"), ("DONE", "PEND"), ("PEND", "RUN"),
                     ("RUN", "DONE")], moves
    assert job["history"][3]["reason"] == f"requeued by {job['user']}"
    r = xce("requeue", str(jobid + 10_000), check=False)
    assert r.returncode == 1 and r.stderr == f"xce: job {jobid + 10_000} does not exist\n"


def test_requeue_of_a_running_job_stops_it_then_runs_it_again(six):
    _, xce = six
    # The first run waits; the second (the file then has two lines) ends at once.
    script = "echo $$ >> rerun.pids; [ $(wc -l < rerun.pids) -ge 2 ] || exec sleep 60"
    jobid = xce.submit("--", "sh", "-c", script)
    xce.wait_state(jobid, "RUN", 30)
    first = int(wait_for(lambda: (xce.cwd / "rerun.pids").exists() and (xce.cwd / "rerun.pids").read_text().split(),
                         15, "the first run to start")[0])
    r = xce("requeue", str(jobid))
    assert r.stdout == f"Job <{jobid}> is being requeued (it goes back to PEND when its processes have ended).\n"
    job = xce.wait_state(jobid, "DONE", 40)
    assert len(_started(job)) == 2 and (xce.cwd / "rerun.pids").read_text().split()[0] == str(first)
    assert not os.path.exists(f"/proc/{first}/cmdline") or \
        open(f"/proc/{first}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
    moves = [(h["from"], h["to"]) for h in job["history"]]
    assert moves == [(None, "PEND"), ("PEND", "RUN"), ("RUN", "RUN"), ("RUN", "PEND"), ("PEND", "RUN"),
                     ("RUN", "DONE")], moves
    assert job["history"][3]["reason"] == f"requeued by {job['user']}"
    # The run it stopped ended before the next one started: never two runs of one job at once.
    assert job["history"][3]["ts"] <= job["history"][4]["ts"]


def test_modify_shortens_the_run_limit_of_a_running_job(six):
    _, xce = six
    jobid = xce.submit("--time", "10:00", "--", "sleep", "60")
    started = _started(xce.wait_state(jobid, "RUN", 30))[0]
    r = xce("modify", str(jobid), "--time", "0:03")
    assert r.returncode == 0, r.stderr
    job = xce.wait_state(jobid, "EXIT", 30)
    assert "run limit 0:00:03 reached (TERM_RUNLIMIT)" in job["reason"], job["reason"]
    ended = job["history"][-1]["ts"]
    assert 3e9 <= ended - started < 20e9  # at the new limit, counted from its start
    r = xce("modify", str(jobid), "--time", "1:00", check=False)
    assert r.returncode == 1 and "it is EXIT" in r.stderr
