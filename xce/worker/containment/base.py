"""What a worker needs from the thing that holds a job's processes together, whatever it is.

One object per worker, chosen once at start (:func:`xce.worker.containment.detect`). Everything is
keyed by job id, so that the tasks of a parallel job started later on the same host (by ``xce
launch`` through the worker) join the same container with :meth:`Containment.join` and die with it.
"""

from __future__ import annotations

import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from xce.protocol.usage import CPU_MS, CPU_SYS_MS, CPU_USER_MS, MEM_PEAK, MEMORY_RSS

#: How long a kill keeps sweeping a container for processes that were forking while it killed.
KILL_SWEEP_S = 5.0
#: The name of the spawner's own group beside the jobs' (``job_<id>``) under a worker's.
SPAWNER = "spawner"
#: A spawner that starts a job from inside the job's groups (:meth:`Containment.home_files`) is a
#: member for a moment: below this memory limit the job's own OOM kill could pick it.
VISITOR_MIN_MEM = 64 << 20



@dataclass(frozen=True, slots=True)
class Limits:
    """What the kernel enforces for one job; None is no limit."""

    mem: int | None = None          # bytes
    cpu_milli: int | None = None    # thousandths of a CPU (xce.io/cpu-milli)
    pids: int | None = None         # processes and threads

    @classmethod
    def of(cls, limits: dict[str, int], *pids: int) -> "Limits":
        """The job's ``limits``, and the smallest of the pids limits that apply to it (its own
        ``--limit pids=N``, the worker's ``--pids-max``, its queue's ``process_limit``)."""
        mem = limits.get("mem")
        cpu = limits.get("xce.io/cpu-milli")
        pids = (*pids, int(limits["pids"])) if limits.get("pids") else pids
        return cls(int(mem) if mem else None, int(cpu) if cpu else None, min(pids) if pids else None)

    def admit_visitor(self) -> bool:
        """Whether the spawner may start the job's process from inside its groups: not with a memory
        limit it could be OOM-killed under, nor with a pids limit of 1 (its clone would be refused)."""
        return (self.mem is None or self.mem >= VISITOR_MIN_MEM) and (self.pids is None or self.pids >= 2)


@dataclass(frozen=True, slots=True)
class Usage:
    """A job's usage as the container counts it: memory in bytes (``memory_rss`` now, ``mem_peak`` the
    kernel's high-water mark where it keeps one), CPU in milliseconds (user + system, and each where
    the kernel splits them). Milliseconds, not seconds: a job of 0.95 s of CPU used 950 ms, not 0."""

    memory_rss: int
    mem_peak: int | None
    cpu_ms: int
    cpu_user_ms: int | None = None
    cpu_sys_ms: int | None = None

    def tick(self, *, ended: bool = False) -> dict[str, int]:
        """The usage tick (:mod:`xce.protocol.usage`). ``ended``: the job's last,
        read after its processes are gone: its memory now (none) would drag the average down, so only
        the counters and the peak are sent."""
        out = {} if ended else {MEMORY_RSS: self.memory_rss}
        out[CPU_MS] = self.cpu_ms
        for name, value in ((CPU_USER_MS, self.cpu_user_ms), (CPU_SYS_MS, self.cpu_sys_ms),
                            (MEM_PEAK, self.mem_peak)):
            if value is not None:
                out[name] = value
        return out


class Containment(ABC):
    #: ``cgroup-v2``, ``cgroup-v1`` or ``process-group``: what ``xce hosts -l`` shows.
    kind: str = ""
    #: True when the kernel enforces the memory limit (otherwise the worker polls RSS and kills).
    enforces_memory: bool = False

    @abstractmethod
    def describe(self) -> str:
        """One line for the worker's log: what it uses and where."""

    @abstractmethod
    def start(self, keep: set[int]) -> list[int]:
        """At worker start: make the parent, then kill and remove every job container not in ``keep``
        (jobs a previous run left behind that this run does not adopt). Returns the job ids removed."""

    @abstractmethod
    def create(self, jobid: int, limits: Limits) -> None:
        """Make job ``jobid``'s container with its limits (before any of its processes exists)."""

    @abstractmethod
    def join(self, jobid: int, pid: int) -> None:
        """Move ``pid`` (a process not yet running the job's code) into the job's container."""

    def procs_files(self, jobid: int) -> tuple[str, ...]:
        """The files writing a pid into makes it a member (``cgroup.procs``); none where joining is
        more than that (a process group is recorded by the worker)."""
        return ()

    def home_files(self, jobid: int) -> tuple[str, ...] | None:
        """The ``cgroup.procs`` of a group of the spawner's own beside the jobs' in each hierarchy of
        job ``jobid``'s groups (in the order of :meth:`procs_files`), made by :meth:`start`: from there
        it enters the job's groups, starts the job's process, which is born a member, and comes back,
        instead of forking a process to move. None where there is none."""
        return None

    @abstractmethod
    def members(self, jobid: int) -> list[int]:
        """Every process of the job that is still there, however it detached itself."""

    def signal(self, jobid: int, sig: int) -> None:
        """Send ``sig`` to every member."""
        for pid in self.members(jobid):
            _send(pid, sig)

    def suspend(self, jobid: int, sig: int) -> None:
        """Stop every member (``sig`` to each; the freezer where configured)."""
        self.signal(jobid, sig)

    def resume(self, jobid: int, sig: int) -> None:
        self.signal(jobid, sig)
        if sig != signal.SIGCONT:
            self.signal(jobid, signal.SIGCONT)

    def kill(self, jobid: int) -> bool:
        """SIGKILL every member until none is left (a member forking meanwhile is swept again).
        False if some survived the sweep (unkillable: uninterruptible sleep)."""
        deadline = time.monotonic() + KILL_SWEEP_S
        while True:
            pids = self.members(jobid)
            if not pids:
                return True
            for pid in pids:
                _send(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    @abstractmethod
    def usage(self, jobid: int) -> Usage | None:
        """From the container's own counters; None where it keeps none (the worker walks the tree)."""

    def oom_peak(self, jobid: int) -> int | None:
        """The job's memory peak if the kernel killed one of its processes for its memory limit."""
        return None

    @abstractmethod
    def remove(self, jobid: int) -> None:
        """Kill what is left and remove the container (the job has ended)."""

    def close(self) -> None:  # noqa: B027 - optional: only kernels with directories of their own need it
        """The worker stops with no job left: remove its own (empty) directories."""

    def purge(self) -> None:  # noqa: B027 - optional, as close()
        """Kill and remove every job container of this worker, then its own directories (a local
        cluster being torn down: whatever its workers left is gone with it)."""

    def adopt(self, jobid: int, pgid: int) -> None:  # noqa: B027 - optional: only the process-group fallback needs it
        """A restarted worker takes back a running job (the process group fallback needs its group)."""


def _send(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass
