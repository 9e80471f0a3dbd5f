"""Containment with real workers as root on this machine's control groups (v1 here).

Each test fails without containment: a ``setsid`` or double-forked child escapes a process group,
an RSS poll lets a fast allocation overshoot, nothing throttles a busy loop, and SIGSTOP to a
process group misses a child that left it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from conftest import proc_state, read_pid, wait_for

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="control groups need a root worker")]

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def alive(pid: int) -> bool:
    try:
        return proc_state(pid) not in ("Z", "X")
    except OSError:
        return False


def kill_left(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def job_groups(cluster, jobid: int) -> list[Path]:
    """The job's group directories in every v1 hierarchy (found by their layout)."""
    name = cluster.worker_names[0]
    found = []
    for top in Path("/sys/fs/cgroup").iterdir():
        found += [p for p in top.rglob(f"{cluster.cgroup_parent}/{name}/job_{jobid}")]
    return found


def test_setsid_and_double_fork_die_with_the_job(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=1, slots=2)
    hosts = json.loads(xce("hosts", "--json").stdout)["hosts"]
    assert hosts[0]["containment"] == "cgroup-v1", hosts
    assert "containment  cgroup-v1" in xce("hosts", "-l").stdout
    a, b = tmp_path / "setsid.pid", tmp_path / "double.pid"
    script = (f"setsid sleep 300 & echo $! > {a}; "
              f"(sh -c 'setsid sleep 301 & echo $! > {b}' &); sleep 1")
    jobid = xce.submit("--", "sh", "-c", script)
    escaped = [read_pid(a), read_pid(b)]
    try:
        assert all(alive(p) for p in escaped)
        assert job_groups(cluster, jobid), "the running job has a control group"
        xce.wait_state(jobid, "DONE", 30)
        wait_for(lambda: not any(alive(p) for p in escaped), 10, "the escaped children to be killed")
        wait_for(lambda: not job_groups(cluster, jobid), 10, "the job's control groups to be removed")
    finally:
        kill_left(*escaped)


def test_kill_reaches_every_process_of_the_job(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=1, slots=1)
    a = tmp_path / "setsid.pid"
    jobid = xce.submit("--", "sh", "-c", f"setsid sleep 300 & echo $! > {a}; sleep 300")
    child = read_pid(a)
    try:
        xce.wait_state(jobid, "RUN", 30)
        xce("kill", str(jobid))
        xce.wait_state(jobid, "EXIT", 30)
        wait_for(lambda: not alive(child), 10, "the setsid child to be killed with the job")
    finally:
        kill_left(child)


def test_fast_allocation_is_stopped_by_the_kernel_at_its_limit(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=1)
    grab = "b = bytearray(600 * 1024 * 1024); import time; time.sleep(20)"
    jobid = xce.submit("--limit", "mem=100M", "--", sys.executable, "-c", grab)
    job = xce.wait_state(jobid, "EXIT", 60)
    m = re.search(r"memory limit 100M reached \(peak ([\d.]+)([KMGT]?)\)", job["reason"])
    assert m, job["reason"]
    peak = float(m.group(1)) * UNITS[m.group(2)]
    assert peak <= (100 << 20) + (8 << 20), job["reason"]  # the limit, plus a page-cache margin
    assert job["exit_signal"] == "SIGKILL"


def test_busy_loop_under_a_cpu_quota_is_throttled(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=1, slots=1)
    out = tmp_path / "cpu.out"
    loop = ("import os, time\n"
            "t0, c0 = time.monotonic(), sum(os.times()[:2])\n"
            "while time.monotonic() - t0 < 3: pass\n"
            "print((sum(os.times()[:2]) - c0) / (time.monotonic() - t0))\n")
    jobid = xce.submit("--limit", "xce.io/cpu-milli=200", "-o", str(out), "--", sys.executable, "-c", loop)
    xce.wait_state(jobid, "DONE", 60)
    rate = float(out.read_text().split()[-1])
    assert rate <= 0.3, f"{rate:.2f} CPU-seconds per wall second under a 200 milli-CPU quota"


def test_suspend_stops_a_child_that_left_the_process_group(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=1, slots=1)
    lead, kid = tmp_path / "leader.pid", tmp_path / "child.pid"
    jobid = xce.submit("--", "sh", "-c", f"echo $$ > {lead}; setsid sleep 300 & echo $! > {kid}; wait")
    pids = [read_pid(lead), read_pid(kid)]
    try:
        xce.wait_state(jobid, "RUN", 30)
        xce("suspend", str(jobid))
        xce.wait_state(jobid, "USUSP", 30)
        wait_for(lambda: all(proc_state(p) == "T" for p in pids), 10,
                 lambda: f"both to be stopped (states {[proc_state(p) for p in pids]})")
        xce("resume", str(jobid))
        xce.wait_state(jobid, "RUN", 30)
        wait_for(lambda: all(proc_state(p) != "T" for p in pids), 10, "both to run again")
        xce("kill", str(jobid))
        xce.wait_state(jobid, "EXIT", 30)
        wait_for(lambda: not any(alive(p) for p in pids), 10, "both to be killed")
    finally:
        kill_left(*pids)


def test_usage_counts_a_double_forked_process_from_the_kernels_counters(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=1, slots=1)
    work = ("import time; b = bytearray(200 * 1024 * 1024); t = time.process_time()\n"
            "while time.process_time() - t < 1.5: pass\n"
            "open(\"burnt\", \"w\").close(); time.sleep(1)\n")
    # The worker forked by a subshell is reparented away from the job's leader: only the job's
    # control group still knows it is the job's. The leader waits for its CPU second and a half,
    # however slowly a loaded machine gives it.
    jobid = xce.submit("--", "sh", "-c", f"cd {tmp_path} && ({sys.executable} -c '{work}' &); "
                       "until [ -e burnt ]; do sleep 0.1; done")
    job = xce.wait_state(jobid, "DONE", 60)
    peak = job["usage"]["peak"]
    assert peak["memory_rss"] >= 200 << 20, peak
    assert peak["cpu_ms"] >= 1000, peak


def test_a_queues_process_limit_caps_the_processes_of_its_jobs(make_cluster, tmp_path):
    config = tmp_path / "xce.toml"
    config.write_text("[queues.normal]\nprocess_limit = 8\n")
    cluster, xce = make_cluster(workers=1, slots=1, config=config)
    out = tmp_path / "forks.out"
    # 20 forks: the kernel refuses those beyond the limit, and the job says how many it got.
    script = ("import os, time\n"
              "n = 0\n"
              "for _ in range(20):\n"
              "    try:\n"
              "        if os.fork() == 0:\n"
              "            time.sleep(30)\n"
              "            os._exit(0)\n"
              "        n += 1\n"
              "    except OSError:\n"
              "        pass\n"
              "print('started', n, flush=True)\n"
              "time.sleep(30)\n")
    jobid = xce.submit("-o", str(out), "--", sys.executable, "-c", script)
    xce.wait_state(jobid, "RUN", 30)
    wait_for(lambda: out.exists() and "started" in out.read_text(), 20, "the job to try its forks")
    assert int(out.read_text().split()[-1]) == 7  # itself and 7 children: 8
    (group,) = [g for g in job_groups(cluster, jobid) if (g / "pids.max").exists()]
    assert (group / "pids.max").read_text().strip() == "8"
    assert int((group / "pids.current").read_text()) <= 8
    members = [int(p) for p in (group / "cgroup.procs").read_text().split()]
    assert 1 < len(members) <= 8, members
    xce("kill", str(jobid))
    xce.wait_state(jobid, "EXIT", 30)
    # The job's own --limit pids=N, below its queue's: the smaller holds.
    out.unlink()
    jobid = xce.submit("-o", str(out), "--limit", "pids=4", "--", sys.executable, "-c", script)
    wait_for(lambda: out.exists() and "started" in out.read_text(), 30, "the limited job to try its forks")
    assert int(out.read_text().split()[-1]) == 3
    (group,) = [g for g in job_groups(cluster, jobid) if (g / "pids.max").exists()]
    assert (group / "pids.max").read_text().strip() == "4"
    xce("kill", str(jobid))
    xce.wait_state(jobid, "EXIT", 30)
    wait_for(lambda: not any(alive(p) for p in members), 15, "the job's processes to be killed")
