"""The process-tree fallback (no control group): CPU time in milliseconds, counting the children a
job's processes have already waited for, which whole seconds of the live processes alone missed."""

from __future__ import annotations

import subprocess
import sys

from xce.worker import usage

#: Burns 0.3 s in a child it waits for, 0.2 s itself, says its own figure (its and its children's
#: CPU time) and waits for a line on its input.
WORK = ("import os, sys, time\n"
        "def burn(s):\n    end = time.process_time() + s\n    while time.process_time() < end: pass\n"
        "pid = os.fork()\nif pid == 0:\n    burn(0.3); os._exit(0)\n"
        "os.waitpid(pid, 0)\nburn(0.2)\nt = os.times()\n"
        "print(round((t[0] + t[1] + t[2] + t[3]) * 1000), flush=True)\nsys.stdin.readline()\n")


def test_the_tree_counts_cpu_in_milliseconds_with_waited_for_children():
    p = subprocess.Popen([sys.executable, "-c", WORK], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        own = int(p.stdout.readline())
        tick = usage.sample(p.pid)
    finally:
        p.communicate("\n", timeout=30)
    assert abs(tick["cpu_ms"] - own) <= 30, (tick, own)
    # The child's 0.3 s is in (its parent waited for it): more than the parent's own 0.2 s.
    assert tick["cpu_ms"] >= 450 and abs(tick["cpu_user_ms"] + tick["cpu_sys_ms"] - tick["cpu_ms"]) <= 1, tick
    assert tick["memory_rss"] > 0
