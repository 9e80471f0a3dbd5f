"""The cgroup v2 layer against a fake unified hierarchy in tmp_path (this machine runs v1).

The fake holds the files v2 has (``cgroup.controllers``, ``cgroup.subtree_control``,
``cgroup.procs``, ``memory.current``, ...); what the kernel would do on its own (list a member,
count usage, drop a dead group's files) the test does by writing those files.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from xce.worker.containment import CgroupV2, Limits, ProcessGroup, detect
from xce.worker.containment.base import Usage


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (root / "cgroup.subtree_control").write_text("")
    return root


def kernel_fills(d: Path, **files: str) -> None:
    """What the kernel shows in a new group: its interface files."""
    for name, text in files.items():
        (d / name).write_text(text)


def kernel_drops(d: Path) -> None:
    """A real group's files vanish with it; the fake's must go before rmdir can succeed."""
    for f in d.iterdir():
        if f.is_file():
            f.unlink()


@pytest.fixture
def sleeper():
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def test_layout_delegation_and_limits(tmp_path):
    root = fake_root(tmp_path)
    for d in (root / "xce", root / "xce" / "node07"):  # as the kernel shows them below the root
        d.mkdir()
        kernel_fills(d, **{"cgroup.controllers": "cpu memory pids\n", "cgroup.subtree_control": ""})
    box = CgroupV2(root, "xce", "node07")
    assert box.start(set()) == []
    # memory, cpu and pids are delegated down to the worker's own group, which holds no process
    for d in (root, root / "xce", root / "xce" / "node07"):
        assert (d / "cgroup.subtree_control").read_text().split() == ["+memory", "+cpu", "+pids"], d
    box.create(42, Limits(mem=100 << 20, cpu_milli=200, pids=64))
    job = root / "xce" / "node07" / "job_42"
    assert job.is_dir()
    assert (job / "memory.max").read_text() == str(100 << 20)
    assert (job / "cpu.max").read_text() == "20000 100000"  # 200 milli-CPU: 20 ms per 100 ms period
    assert (job / "pids.max").read_text() == "64"
    assert box.kind == "cgroup-v2" and box.enforces_memory


def test_swap_cannot_stretch_the_memory_limit(tmp_path):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    job = box.job_dir(1)
    job.mkdir()
    (job / "memory.swap.max").write_text("max")
    box.create(1, Limits(mem=1 << 30))
    assert (job / "memory.swap.max").read_text() == "0"


def test_no_limit_writes_no_limit_file(tmp_path):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(3, Limits())
    assert sorted(p.name for p in box.job_dir(3).iterdir()) == []


def test_join_members_kill_and_remove(tmp_path, sleeper):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(5, Limits())
    a, b = sleeper(), sleeper()
    box.join(5, a.pid)
    assert (box.job_dir(5) / "cgroup.procs").read_text() == str(a.pid)
    (box.job_dir(5) / "cgroup.procs").write_text(f"{a.pid}\n{b.pid}\n")  # b forked inside the group
    (box.job_dir(5) / "cgroup.kill").write_text("")
    assert box.members(5) == [a.pid, b.pid]
    assert box.kill(5)
    assert (box.job_dir(5) / "cgroup.kill").read_text() == "1"
    assert a.wait(5) == -signal.SIGKILL and b.wait(5) == -signal.SIGKILL
    assert box.members(5) == []  # dead processes are not members
    kernel_drops(box.job_dir(5))
    box.remove(5)
    assert not box.job_dir(5).exists()


def test_suspend_signals_every_member_or_freezes(tmp_path, sleeper):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(6, Limits())
    a, b = sleeper(), sleeper()
    (box.job_dir(6) / "cgroup.procs").write_text(f"{a.pid}\n{b.pid}\n")
    box.suspend(6, signal.SIGSTOP)
    for p in (a, b):
        assert _wait_state(p.pid, "T")
    box.resume(6, signal.SIGCONT)
    for p in (a, b):
        assert _wait_state(p.pid, "S") or _state(p.pid) == "R"
    frozen = CgroupV2(box.root, "xce", "n1", freeze=True)
    (box.job_dir(6) / "cgroup.freeze").write_text("0")
    frozen.suspend(6, signal.SIGSTOP)
    assert (box.job_dir(6) / "cgroup.freeze").read_text() == "1"
    assert _state(a.pid) != "T"  # the freezer, not a signal
    frozen.resume(6, signal.SIGCONT)
    assert (box.job_dir(6) / "cgroup.freeze").read_text() == "0"


def test_usage_and_oom_from_the_groups_counters(tmp_path):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(8, Limits(mem=100 << 20))
    job = box.job_dir(8)
    kernel_fills(job, **{"memory.current": "73400320\n", "memory.peak": "104857600\n",
                         "memory.stat": "anon 69206016\nfile 4194304\n",
                         "cpu.stat": "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
                         "memory.events": "low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\n"})
    assert box.usage(8) == Usage(memory_rss=69206016, mem_peak=104857600, cpu_ms=2500, cpu_user_ms=2000,
                                 cpu_sys_ms=500)  # 2.5 s of CPU is 2500 ms, not 2 s
    assert box.oom_peak(8) is None
    (job / "memory.events").write_text("low 0\nhigh 0\nmax 30\noom 2\noom_kill 1\n")
    assert box.oom_peak(8) == 104857600


def test_worker_start_removes_leftover_job_groups_but_keeps_adopted(tmp_path, sleeper):
    root = fake_root(tmp_path)
    box = CgroupV2(root, "xce", "n1")
    box.start(set())
    for jobid in (1, 2):
        box.create(jobid, Limits())
    left = sleeper()
    (box.job_dir(1) / "cgroup.procs").write_text(f"{left.pid}\n")  # escaped child of a job that ended
    (box.job_dir(2) / "cgroup.procs").write_text("")
    kernel_drops(box.job_dir(2))
    again = CgroupV2(root, "xce", "n1")
    removed = again.start({2})  # job 2 was adopted; job 1's leader ended while the worker was down
    assert removed == [1]
    assert left.wait(5) == -signal.SIGKILL
    assert box.job_dir(2).is_dir()


def test_close_removes_the_workers_empty_groups(tmp_path):
    root = fake_root(tmp_path)
    box = CgroupV2(root, "xce", "n1")
    box.start(set())
    for d in (root / "xce" / "n1", root / "xce"):
        kernel_drops(d)
    box.close()
    assert not (root / "xce").exists()


def test_detect_prefers_v2_with_controllers(tmp_path):
    root = fake_root(tmp_path)
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"30 24 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
    own = tmp_path / "own"
    own.write_text("0::/\n")
    box = detect("n1", mountinfo=str(mountinfo), own=str(own))
    assert isinstance(box, CgroupV2) and box.base == root / "xce" / "n1"
    assert "cgroup v2" in box.describe()


def test_detect_falls_back_when_v2_has_no_controllers(tmp_path):
    root = fake_root(tmp_path)
    (root / "cgroup.controllers").write_text("\n")  # a hybrid host: v2 mounted, controllers on v1
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"30 24 0:26 / {root} rw - cgroup2 cgroup2 rw\n")
    own = tmp_path / "own"
    own.write_text("0::/\n")
    box = detect("n1", mountinfo=str(mountinfo), own=str(own))
    assert isinstance(box, ProcessGroup)
    assert "no memory controller" in box.describe()


def test_detect_refuses_a_kind_the_host_lacks(tmp_path):
    from xce.worker.containment import ContainmentError

    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("")
    with pytest.raises(ContainmentError, match="cgroup-v2 is not available on this host: no cgroup v2 mount"):
        detect("n1", kind="cgroup-v2", mountinfo=str(mountinfo), own=str(tmp_path / "none"))


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait_state(pid: int, want: str) -> bool:
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if _state(pid) == want:
            return True
        time.sleep(0.01)
    return False


def test_pid_files_of_dead_processes_are_not_members(tmp_path):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(9, Limits())
    (box.job_dir(9) / "cgroup.procs").write_text(f"{os.getpid()}\n999999999\n")
    assert box.members(9) == [os.getpid()]
