"""Whether a pid is still the process it was (``xce.procs``): a zombie, a reaped child and a pid
given to another process all count as gone, as the cluster's supervisor, the HA lease and the
worker rely on."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from xce.procs import pid_alive, process_start


def test_a_running_process_is_alive_and_its_start_is_psutils():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = process_start(child.pid)
        assert started is not None and abs(started - psutil.Process(child.pid).create_time()) < 0.01
        assert pid_alive(child.pid) and pid_alive(child.pid, started)
    finally:
        child.kill()
        child.wait()


def test_a_zombie_and_a_reaped_child_are_gone():
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pid_alive(child.pid) and process_start(child.pid) is None
    child.wait()
    assert not pid_alive(child.pid)


def test_another_process_under_a_recorded_pid_is_not_the_one_recorded():
    mine = os.getpid()
    assert not pid_alive(mine, process_start(mine) - 60)


def test_no_pid_names_a_process_group():
    assert not pid_alive(0) and not pid_alive(-1) and process_start(0) is None
