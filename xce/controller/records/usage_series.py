"""A job's usage over time, kept bounded inside its usage record (for the dashboard's job page).

Each usage tick is folded into running figures (peak, mean) by :mod:`xce.controller.hosts.fleet`; this keeps
beside them at most :data:`MAX_POINTS` samples. When the series is full, every other sample is
dropped and from then on only every 2nd (then 4th, ...) tick is kept, so a job of any length keeps
an evenly spread picture of its whole run in a few kilobytes, and the cost of a tick stays one row
update, whatever the run time. Points are ``[seconds since the first sample, {name: value}]`` in
the worker's own vocabulary (``memory_rss`` bytes, ``cpu_ms`` milliseconds: :mod:`xce.protocol.usage`),
but for the figures that only the job's totals need (:data:`UNCHARTED`), which would double its size.
"""

from __future__ import annotations

from typing import Any

from xce.protocol.usage import CPU_SYS_MS, CPU_USER_MS, MEM_PEAK

MAX_POINTS = 96
#: Tick names kept out of the series: the job page charts memory and CPU time, not these.
UNCHARTED = frozenset({CPU_USER_MS, CPU_SYS_MS, MEM_PEAK})


def append(series: dict[str, Any] | None, tick: dict[str, int], ts: int) -> dict[str, Any]:
    """The series with the tick at ``ts`` (ns) taken into account (a new dict; the old one is not changed).

    Ticks are numbered from 0; tick ``n`` is kept when ``n`` is a multiple of the stride, so the
    kept points stay evenly spaced in ticks across every thinning."""
    tick = {k: v for k, v in tick.items() if k not in UNCHARTED}
    if not series:
        return {"t0": ts, "stride": 1, "n": 0, "points": [[0.0, dict(sorted(tick.items()))]]}
    stride, n, points = int(series["stride"]), int(series["n"]) + 1, series["points"]
    if n % stride == 0:
        points = [*points, [round((ts - int(series["t0"])) / 1e9, 1), dict(sorted(tick.items()))]]
        if len(points) >= MAX_POINTS:
            points, stride = points[::2], stride * 2
    return {"t0": series["t0"], "stride": stride, "n": n, "points": points}
