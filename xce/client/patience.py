"""Waiting for a process of our own as long as the machine lets it work, not a fixed wall time.

A controller that imports its web stack needs a second or two of CPU. On a quiet machine that is a
second or two; on a shared 2-core machine at load 20 it is half a minute, and a fixed 30 s wait
then calls a healthy start a failure (with an empty log: nothing had run yet). A :class:`Patience`
counts wall time at the rate the CPUs are free: each second at a load of N per core counts 1/N
(the 1-minute load average, read at most twice a second), up to ``MAX_STRETCH`` times the budget
in wall time, so a process that is truly stuck is still given up on. ``XCE_PATIENCE`` multiplies
every budget (a slow machine's operator or CI may set it). Standard library only.
"""

from __future__ import annotations

import os
import time
from typing import Callable

#: The most wall time a budget may stretch to, as a multiple of it.
MAX_STRETCH = 10.0


def _scale() -> float:
    try:
        return max(1.0, float(os.environ.get("XCE_PATIENCE", "1")))
    except ValueError:
        return 1.0


def load_per_cpu() -> float:
    """The 1-minute load average per CPU (0 where the platform has none)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


class Patience:
    """``budget`` seconds of a machine that is not oversubscribed."""

    def __init__(self, budget: float, load: Callable[[], float] = load_per_cpu) -> None:
        self.budget = budget * _scale()
        self._load = load
        self.start = self._last = time.monotonic()
        self.credited = 0.0
        self._rate = 1.0
        self._rate_at = float("-inf")

    def _tick(self) -> None:
        now = time.monotonic()
        if now - self._rate_at >= 0.5:
            self._rate, self._rate_at = 1.0 / max(1.0, self._load()), now
        self.credited += (now - self._last) * self._rate
        self._last = now

    def expired(self) -> bool:
        self._tick()
        return self.credited >= self.budget or self.waited() >= self.budget * MAX_STRETCH

    def waited(self) -> float:
        """Wall seconds since the start."""
        return time.monotonic() - self.start

    def describe(self) -> str:
        """What the wait was, for the message that gives up: wall time, budget and the load."""
        return (f"{self.waited():.1f}s (a budget of {self.budget:g}s at the machine's pace; "
                f"load {load_per_cpu():.1f} per CPU)")
