"""What a job really uses, summed over its whole process tree, as the worker reports it.

The tree is the job's leader and all its descendants, plus any process still in its process group
(a daemonising child is reparented away from the leader but keeps the group). Processes that vanish
while being read are simply skipped: a tick is a sample, not an audit.
"""

from __future__ import annotations

import os

import psutil


def tree(pid: int, pgid: int | None = None) -> list[psutil.Process]:
    procs: dict[int, psutil.Process] = {}
    try:
        leader = psutil.Process(pid)
        procs[pid] = leader
        for child in leader.children(recursive=True):
            procs[child.pid] = child
    except psutil.Error:
        pass
    if pgid is not None:
        for p in psutil.process_iter():
            if p.pid in procs:
                continue
            try:
                if os.getpgid(p.pid) == pgid:
                    procs[p.pid] = p
            except OSError:
                continue
    return list(procs.values())


def sample(pid: int, pgid: int | None = None, *, whole_group: bool = False) -> dict[str, int]:
    """``memory_rss`` (bytes, summed RSS) and ``cpu_time`` (whole seconds, user + system)."""
    rss = 0
    cpu = 0.0
    for p in tree(pid, pgid if whole_group else None):
        try:
            with p.oneshot():
                if p.status() == psutil.STATUS_ZOMBIE:
                    continue
                rss += p.memory_info().rss
                t = p.cpu_times()
                cpu += t.user + t.system
        except psutil.Error:
            continue
    return {"memory_rss": int(rss), "cpu_time": int(cpu)}


def fmt_bytes(n: int) -> str:
    """312M style, as people read memory in a kill reason."""
    for unit, size in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.1f}{unit}" if v < 10 and v != int(v) else f"{int(round(v))}{unit}"
    return f"{n}B"
