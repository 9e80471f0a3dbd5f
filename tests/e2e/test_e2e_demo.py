"""``xce demo`` is the README's first command: it must really run the workload, and leave nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from xce.cluster.demo import RESULT_FILE, SLOTS, WORKERS, DemoJob, check, workload
from xce.cluster.local import CLUSTER_FILE
from xce.procs import pid_alive


@pytest.mark.integration
@pytest.mark.slow
def test_demo_runs_the_workload_and_stops_the_cluster(tmp_path):
    state = tmp_path / "demo-state"
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "demo", "--state-dir", str(state)],
                       capture_output=True, text=True, timeout=150, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "xce demo: OK" in out
    # The final table and the lines under it name the preemption from the jobs' state histories.
    assert "SSUSP" in out and "preempted by job" in out and "resumed by the scheduler" in out, out
    assert "Preemption seen in the history" in out, out

    result = json.loads((state / RESULT_FILE).read_text())
    assert result["ok"], result["reason"]
    assert {j["state"] for j in result["jobs"]} == {"DONE"}
    parallel = [j for j in result["jobs"] if j["tasks"] == 4][0]
    assert len(parallel["placement"]) == 2
    assert "tasks on" in (state / "output" / f"xce-{parallel['jobid']}.out").read_text()

    # Nothing of the cluster is left: its processes, and the jobs' own processes.
    assert set(result["cluster_pids"]) >= {"controller", "scheduler"}
    assert len(result["cluster_pids"]) == 2 + WORKERS
    assert len(result["job_pids"]) == len(result["jobs"])
    left = {name: pid for name, pid in {**result["cluster_pids"], **result["job_pids"]}.items() if pid_alive(pid)}
    assert not left, f"still running after xce demo: {left}"
    assert not (state / CLUSTER_FILE).exists()


def test_demo_core_needs_no_processes():
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "demo", "--core"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PREEMPT" in r.stdout and "RESUME" in r.stdout


def test_workload_forces_the_preemption():
    """Stage 2 must fill every slot, or the high-priority job would simply run on a free host."""
    stages = list(workload().values())
    assert sum(j.tasks for j in stages[1]) == WORKERS * SLOTS
    assert [j.queue for j in stages[2]] == ["high"] and stages[2][0].tasks == SLOTS
    low = [j for j in stages[1] if j.queue == "low"]
    assert len(low) == 1 and low[0].tasks == SLOTS and "hosts=1" in low[0].request


def _detail(jobid, queue, tasks, history, state="DONE", placement=None):
    return {"jobid": jobid, "queue": queue, "tasks": tasks, "state": state, "reason": "exit code 0",
            "placement": placement or [{"host": "h1", "tasks": tasks}],
            "history": [{"ts": i, "from": f, "to": t, "reason": why} for i, (f, t, why) in enumerate(history)]}


def test_check_names_what_did_not_happen():
    jobs = {1: DemoJob("low", "low", 2, ["true"]), 2: DemoJob("high", "high", 2, ["true"]),
            3: DemoJob("par", "normal", 4, ["true"])}
    done = [(None, "PEND", "submitted"), ("PEND", "RUN", "dispatched"), ("RUN", "DONE", "exit code 0")]
    preempted = [(None, "PEND", "submitted"), ("PEND", "RUN", "dispatched"), ("RUN", "SSUSP", "preempted by job 2"),
                 ("SSUSP", "RUN", "resumed by the scheduler"), ("RUN", "DONE", "exit code 0")]
    par = _detail(3, "normal", 4, done, placement=[{"host": "h1", "tasks": 2}, {"host": "h2", "tasks": 2}])
    assert check([_detail(1, "low", 2, preempted), _detail(2, "high", 2, done), par], jobs) is None
    assert "never preempted" in check([_detail(1, "low", 2, done), _detail(2, "high", 2, done), par], jobs)
    assert "ended EXIT" in check([_detail(1, "low", 2, preempted, state="EXIT"), _detail(2, "high", 2, done), par],
                                 jobs)
    one_host = _detail(3, "normal", 4, done)
    assert "not on two hosts" in check([_detail(1, "low", 2, preempted), _detail(2, "high", 2, done), one_host], jobs)
