"""The fallback where no control group is writable (a worker that is not root, a container).

A job is its process group (``setsid`` at its start). A process that calls ``setsid`` itself
leaves the group and escapes; memory limits are enforced by polling RSS. The worker says so at
start, and ``xce hosts -l`` shows ``process-group``.
"""

from __future__ import annotations

import os
import signal
import threading

import psutil

from xce.worker.containment.base import Containment, Limits, Usage


class ProcessGroup(Containment):
    kind = "process-group"
    enforces_memory = False

    def __init__(self, why: str = "") -> None:
        self.why = why
        self._groups: dict[int, int] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        return ("process groups only: a job's processes that leave its group escape, memory limits are polled"
                + (f" ({self.why})" if self.why else ""))

    def start(self, keep: set[int]) -> list[int]:
        return []

    def create(self, jobid: int, limits: Limits) -> None:
        pass

    def join(self, jobid: int, pid: int) -> None:
        with self._lock:
            self._groups.setdefault(jobid, pid)  # the leader's pid is its group (setsid)

    def adopt(self, jobid: int, pgid: int) -> None:
        with self._lock:
            self._groups[jobid] = pgid

    def members(self, jobid: int) -> list[int]:
        with self._lock:
            pgid = self._groups.get(jobid)
        if pgid is None:
            return []
        out = []
        for p in psutil.process_iter():
            try:
                if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p.pid)
            except (OSError, psutil.Error):
                continue
        return out

    def signal(self, jobid: int, sig: int) -> None:
        with self._lock:
            pgid = self._groups.get(jobid)
        if pgid is None:
            return
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass

    def kill(self, jobid: int) -> bool:
        self.signal(jobid, signal.SIGKILL)
        self.signal(jobid, signal.SIGCONT)
        return True

    def usage(self, jobid: int) -> Usage | None:
        return None

    def remove(self, jobid: int) -> None:
        self.kill(jobid)
        with self._lock:
            self._groups.pop(jobid, None)
