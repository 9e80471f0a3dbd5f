"""The cgroup v1 layer against this machine's real hierarchies (root only): the pids limit, the
freezer, and a worker start that finds a leftover group with a process still in it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from xce.worker.containment import CgroupV1, ContainmentError, Limits, detect
from xce.worker.containment.cgroupfs import job_ids


def _v1_or_skip(worker: str, **kw) -> CgroupV1:
    if os.geteuid() != 0:
        pytest.skip("control groups need root")
    try:
        box = detect(worker, kind="cgroup-v1", parent=f"xce-test-{uuid.uuid4().hex[:8]}", **kw)
    except ContainmentError as exc:
        pytest.skip(str(exc))
    assert isinstance(box, CgroupV1)
    return box


@pytest.fixture
def box():
    made: list[CgroupV1] = []

    def make(**kw) -> CgroupV1:
        b = _v1_or_skip("w1", **kw)
        b.start(set())
        made.append(b)
        return b

    yield make
    for b in made:
        for d in b.dirs:
            for jobid in job_ids(d):
                b.remove(jobid)
        b.close()
        assert not any(d.exists() for d in b.dirs)


def _start_in(b: CgroupV1, jobid: int, code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], preexec_fn=lambda: b.join(jobid, os.getpid()),
                            stdout=subprocess.PIPE, text=True)


def test_pids_limit_refuses_the_fork_over_it(box):
    b = box()
    b.create(1, Limits(pids=4))
    fork = ("import os, time\nmade = 0\nfor _ in range(10):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5); os._exit(0)\n    made += 1\n"
            "print(made)\n")
    p = _start_in(b, 1, fork)
    out, _ = p.communicate(timeout=30)
    assert int(out) == 3  # the job's own process and 3 children: 4
    assert b.kill(1)


def test_freezer_stops_every_member_and_kill_gets_a_frozen_job(box):
    b = box(freeze=True)
    b.create(2, Limits())
    p = _start_in(b, 2, "import os, time\nif os.fork() == 0:\n    os.setsid()\ntime.sleep(60)\n")
    deadline = time.monotonic() + 10
    while len(b.members(2)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    members = b.members(2)
    assert len(members) == 2
    b.suspend(2, signal.SIGSTOP)
    state = (b.bases["freezer"] / "job_2" / "freezer.state").read_text().strip()
    assert state == "FROZEN"
    b.resume(2, signal.SIGCONT)
    assert (b.bases["freezer"] / "job_2" / "freezer.state").read_text().strip() == "THAWED"
    b.suspend(2, signal.SIGSTOP)
    assert b.kill(2)  # frozen members die too
    assert p.wait(10) == -signal.SIGKILL
    assert b.members(2) == []


def test_worker_start_kills_what_a_previous_run_left(box):
    b = box()
    b.create(3, Limits())
    p = _start_in(b, 3, "import time; time.sleep(60)")
    deadline = time.monotonic() + 10
    while not b.members(3) and time.monotonic() < deadline:
        time.sleep(0.02)
    again = CgroupV1(b.bases, depth=b.depth)
    assert again.start(set()) == [3]
    assert p.wait(10) == -signal.SIGKILL
    assert not any((d / "job_3").exists() for d in b.dirs)


def test_a_job_has_groups_only_in_the_hierarchies_that_serve_it(box):
    """cpu and pids only enforce limits: a job without them gets no group there, one with them does,
    and either way it is joined, measured and removed in exactly the hierarchies it has."""
    b = box()
    b.create(21, Limits())
    b.create(22, Limits(cpu_milli=500, pids=50))
    has = {jobid: {c for c, base in b.bases.items() if (base / f"job_{jobid}").is_dir()} for jobid in (21, 22)}
    shared = {c for c in b.bases if b.bases[c] in (b.bases.get("memory"), b.bases.get("cpuacct"), b.bases.get("freezer"))}
    assert has[21] == shared  # memory, cpuacct and freezer (and cpu too where it is co-mounted with cpuacct)
    assert has[22] == set(b.bases)
    for jobid in (21, 22):
        p = _start_in(b, jobid, "import os; print(os.getpid())")
        pid = int(p.communicate(timeout=30)[0])
        assert {c for c, base in b.bases.items() if (base / f"job_{jobid}").is_dir()} == has[jobid]
        assert len(b.procs_files(jobid)) == len({b.bases[c] for c in has[jobid]}) and pid > 0
        b.remove(jobid)
        assert not any((base / f"job_{jobid}").exists() for base in b.bases.values())


def test_usage_counts_cpu_to_the_millisecond_and_the_memory_peak(box):
    """A job of 0.6 s of CPU (a child's and its own, by their own count) holding 64 MiB at its peak
    is counted as such, not as 0 whole seconds."""
    b = box()
    b.create(5, Limits())
    work = ("import os, time\n"
            "def burn(s):\n    end = time.process_time() + s\n    while time.process_time() < end: pass\n"
            "pid = os.fork()\nif pid == 0:\n    burn(0.3); os._exit(0)\n"
            "os.waitpid(pid, 0)\nblock = bytearray(64 << 20); block[::4096] = b'x' * len(block[::4096]); del block\n"
            "burn(0.3)\nt = os.times()\nprint(round((t[0] + t[1] + t[2] + t[3]) * 1000))\n")
    p = _start_in(b, 5, work)
    own = int(p.communicate(timeout=60)[0])
    counted = b.usage(5)
    assert counted is not None and abs(counted.cpu_ms - own) <= 30, (counted, own)
    assert counted.cpu_user_ms is not None and counted.cpu_sys_ms is not None
    assert abs(counted.cpu_user_ms + counted.cpu_sys_ms - counted.cpu_ms) <= max(50, counted.cpu_ms // 10), counted
    assert counted.mem_peak is not None and counted.mem_peak >= 64 << 20, counted
    tick = counted.tick(ended=True)
    assert "memory_rss" not in tick and tick["cpu_ms"] == counted.cpu_ms and tick["mem_peak"] == counted.mem_peak
