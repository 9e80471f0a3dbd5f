"""The core's only source of time: ``now = virtual_base + (monotonic_ns - real_base) * num / den``.

The four parameters form one group that a driver replaces atomically (one attribute
assignment of a tuple is atomic in CPython), so a reader on another thread never sees a
half-updated clock. Modes (Req 10 AC 3):

===============  ============  ===========  =====  ==========================================
mode             virtual_base  real_base    speed  behaviour
===============  ============  ===========  =====  ==========================================
normal           0             0            1/1    ``now()`` is the monotonic clock itself
sim discrete     event ts      wall at set  0/1    frozen at the event's ts
sim real time    snapshot ts   wall at set  1/1    advances with the wall clock from the anchor
sim fast / slow  snapshot ts   wall at set  N/1    N times faster (1/N: slower)
===============  ============  ===========  =====  ==========================================
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple


class ClockParams(NamedTuple):
    virtual_base: int
    real_base: int
    num: int
    den: int


class VirtualClock:
    __slots__ = ("_params", "_monotonic")

    def __init__(self, monotonic: Callable[[], int] = time.monotonic_ns) -> None:
        self._monotonic = monotonic
        self._params = ClockParams(0, 0, 1, 1)

    @property
    def params(self) -> ClockParams:
        return self._params

    def set(self, virtual_base: int, real_base: int | None = None, num: int = 1, den: int = 1) -> None:
        """Replace all four parameters as one group; ``real_base=None`` means "the monotonic clock now"."""
        if den <= 0 or num < 0:
            raise ValueError(f"clock speed must be a non-negative fraction with a positive denominator, got {num}/{den}")
        if num == 0:
            real_base = 0  # irrelevant while frozen; a constant keeps snapshots reproducible
        elif real_base is None:
            real_base = self._monotonic()
        self._params = ClockParams(int(virtual_base), int(real_base), int(num), int(den))

    def freeze_at(self, ts: int) -> None:
        """Discrete simulation: time stands still at ``ts`` until the driver moves it."""
        self.set(ts, None, 0, 1)

    def now(self) -> int:
        vb, rb, num, den = self._params
        if num == 0:
            return vb
        return vb + (self._monotonic() - rb) * num // den
