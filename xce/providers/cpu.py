"""``xce.io/cpu-milli``: the CPUs this worker process may actually run on, in thousandths.

The affinity mask, not the machine's core count, because a worker started under ``taskset``,
a cgroup cpuset or a container sees only part of the box; advertising the whole box would
let the scheduler admit jobs that then share the few cores the worker really has.
Milli-units let a job ask for half a core (500) while quantities stay whole numbers.
"""

from __future__ import annotations

import os

from xce.providers.base import ResourceProvider

__all__ = ["CPU_MILLI", "CpuMilliProvider"]

CPU_MILLI = "xce.io/cpu-milli"


def _usable_cpus() -> int | None:
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return len(getaffinity(0))
        except OSError:
            return None
    # Platforms without affinity masks (macOS) let a process run on every CPU, so the
    # count is the honest figure there; None means even that could not be learned.
    return os.cpu_count()


class CpuMilliProvider(ResourceProvider):
    """Measured on first use and cached: the mask belongs to the worker process, and a job
    it starts later must not change what the node advertised."""

    resource_name = CPU_MILLI

    def __init__(self) -> None:
        self._cpus: int | None = None
        self._measured = False
        self.unavailable_reason: str | None = None

    def _measure(self) -> int | None:
        if not self._measured:
            cpus = _usable_cpus()
            if not cpus:
                self.unavailable_reason = "the number of usable CPUs could not be determined"
                cpus = None
            self._cpus = cpus
            self._measured = True
        return self._cpus

    def is_available(self) -> bool:
        return self._measure() is not None

    def capacity(self) -> int:
        cpus = self._measure()
        if cpus is None:
            raise RuntimeError(f"{CPU_MILLI} is unavailable: {self.unavailable_reason}")
        return cpus * 1000
