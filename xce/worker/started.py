"""A started process as the worker holds it, whoever forked it: the worker itself
(:mod:`xce.worker.launch`) or its spawner (:mod:`xce.worker.spawner`), which both build on this and
so need not know each other."""

from __future__ import annotations

import os
import time

#: How long a start may take before the worker gives up on it (a hung file system, say).
START_TIMEOUT_S = 30.0


class Child:
    """A started process, waited for like ``subprocess.Popen`` (``poll`` gives -N for signal N)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        return self.returncode
