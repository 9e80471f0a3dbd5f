"""What a worker tells the controller about its host: static resources once, load indices on a cadence.

``r15s`` has no kernel counterpart (Linux only keeps 1, 5 and 15 minute run-queue averages), so it is
an exponentially weighted average of the number of runnable processes (``procs_running`` of
``/proc/stat``, minus the sampler itself), with a 15-second time constant updated at every report.
Until enough samples exist it starts from the 1-minute average so a fresh worker does not look idle
when the machine is busy. ``ut`` is CPU utilisation as a fraction (0..1) since the previous report.
"""

from __future__ import annotations

import math
import os
import platform
import time
from typing import Any

import psutil

R15S_TAU_S = 15.0


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def static_resources(manager: Any, errors: list[str], slots: int | None = None) -> dict[str, Any]:
    """Static values and the capacities of ``manager``'s providers; a provider refused or
    unmeasurable is added to ``errors``."""
    res: dict[str, Any] = {
        "maxmem": int(psutil.virtual_memory().total),
        "ncpus": usable_cpus(),
        "slots": int(slots if slots is not None else usable_cpus()),
        "type": (platform.machine() or "unknown").upper(),
    }
    res.update(manager.advertised(errors=errors))
    return res


def _procs_running() -> int | None:
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running"):
                    return max(0, int(line.split()[1]) - 1)
    except OSError:
        pass
    return None


class LoadSampler:
    """Keeps the little state that r15s and ut need between reports."""

    def __init__(self) -> None:
        self._r15s: float | None = None
        self._last = time.monotonic()
        psutil.cpu_percent(None)  # prime: the next call measures since now

    def sample(self) -> dict[str, float | int]:
        now = time.monotonic()
        dt, self._last = max(1e-3, now - self._last), now
        r1m, _r5m, r15m = os.getloadavg()
        running = _procs_running()
        if self._r15s is None:
            self._r15s = r1m
        if running is not None:
            alpha = 1.0 - math.exp(-dt / R15S_TAU_S)
            self._r15s += alpha * (running - self._r15s)
        vm = psutil.virtual_memory()
        swap = psutil.swap_memory()
        return {
            "mem": int(vm.available),
            "swp": int(swap.free),
            "r15s": round(self._r15s, 3),
            "r1m": round(r1m, 3),
            "r15m": round(r15m, 3),
            "ut": round(psutil.cpu_percent(None) / 100.0, 3),
        }
