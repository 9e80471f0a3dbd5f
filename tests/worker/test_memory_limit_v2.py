"""A job's memory limit on cgroup v2 (a fake unified hierarchy: this machine runs v1, where the
live tests in tests/e2e/test_e2e_memory_limits.py hold jobs to it): the limit the controller
computed for this host is the job group's ``memory.max``, swap cannot stretch it, and an OOM kill
the kernel counts in ``memory.events`` ends the job MEMLIMIT, whatever its shell did after."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from test_containment_v2 import fake_root, kernel_fills

from xce.config.schema import MemorySettings
from xce.controller.hosts.spread import memory_limits
from xce.endcodes import MEMLIMIT
from xce.worker.containment import CgroupV2, Limits
from xce.worker.runner import JobProcess

M = 1 << 20


def test_the_reserved_memory_is_memory_max_and_an_oom_kill_ends_the_job_memlimit(tmp_path):
    # sbatch -n 3 --mem-per-cpu=100M placed 2 + 1: each worker gets its own host's limit.
    job = {"request": "", "tasks": 3, "requests": json.dumps({"mem": 100 * M}), "limits": None}
    caps = memory_limits(job, [("n1", 2), ("n2", 1)], MemorySettings())
    boxes = {}
    for host in ("n1", "n2"):
        (tmp_path / host).mkdir()
        box = boxes[host] = CgroupV2(fake_root(tmp_path / host), "xce", host)
        box.start(set())
        box.job_dir(7).mkdir()
        kernel_fills(box.job_dir(7), **{"memory.swap.max": "max\n", "memory.events": "oom 0\noom_kill 0\n"})
        box.create(7, Limits.of({"mem": caps[host]}))
    assert [(boxes[h].job_dir(7) / "memory.max").read_text() for h in ("n1", "n2")] == [str(200 * M), str(100 * M)]
    assert all((b.job_dir(7) / "memory.swap.max").read_text() == "0" for b in boxes.values())

    box = boxes["n1"]
    leader = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        box.join(7, leader.pid)
        jp = JobProcess(7, leader.pid, leader.pid, 0.0, {"mem": caps["n1"]}, [], leader, box=box)
        assert jp.poll() is None
        # The kernel's OOM killer at memory.max: it counts the kill and SIGKILLs the biggest member.
        kernel_fills(box.job_dir(7), **{"memory.events": "oom 1\noom_kill 1\n", "memory.peak": f"{200 * M}\n"})
        leader.send_signal(signal.SIGKILL)
        leader.wait(10)
        end = jp.poll()
        assert (end["end"], end["signal"]) == (MEMLIMIT, "SIGKILL"), end
        assert end["reason"] == "killed: memory limit 200M reached (peak 200M)"
    finally:
        leader.kill()
        leader.wait()


def test_a_shell_that_carries_on_after_its_child_was_killed_still_ends_memlimit(tmp_path):
    box = CgroupV2(fake_root(tmp_path), "xce", "n1")
    box.start(set())
    box.create(8, Limits(mem=100 * M))
    kernel_fills(box.job_dir(8), **{"memory.events": "oom 1\noom_kill 1\n", "memory.peak": f"{100 * M}\n"})
    shell = subprocess.Popen(["sh", "-c", "exit 0"])
    shell.wait(10)
    end = JobProcess(8, shell.pid, shell.pid, 0.0, {"mem": 100 * M}, [], shell, box=box).poll()
    assert (end["exit_code"], end["end"]) == (0, MEMLIMIT), end
