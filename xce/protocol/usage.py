"""A usage tick's names and units, from the worker to the controller, and what a job used, read
back from the figures the controller folds them into.

A tick is ``{name: whole number}`` in the worker's own vocabulary (``[resource_names]`` maps names
to resources for the scheduler): ``memory_rss`` the job's memory now and ``mem_peak`` the kernel's
high-water mark of it (bytes), ``cpu_ms`` the CPU time of all its processes so far, user plus
system, with ``cpu_user_ms`` and ``cpu_sys_ms`` where they are known (milliseconds).

Workers before milliseconds sent ``cpu_time`` in whole seconds: :func:`upgrade` reads it as
``cpu_ms``, so a controller takes ticks from workers older than itself (the other way round, an
older controller keeps ``cpu_ms`` as a name it does not know).

The controller keeps per name the running ``peak``, ``mean`` and ``last`` of a job's ticks
(:func:`xce.controller.hosts.fleet._fold_usage`); :func:`used` reads a job's figures out of them,
the one reading every front-end shows.
"""

from __future__ import annotations

from typing import Any

MEMORY_RSS = "memory_rss"
MEM_PEAK = "mem_peak"
CPU_MS = "cpu_ms"
CPU_USER_MS = "cpu_user_ms"
CPU_SYS_MS = "cpu_sys_ms"
#: Whole seconds of CPU, as workers reported it before milliseconds.
LEGACY_CPU_S = "cpu_time"


def upgrade(tick: dict[str, int]) -> dict[str, int]:
    """``tick`` with an older worker's ``cpu_time`` (seconds) as ``cpu_ms``."""
    if LEGACY_CPU_S not in tick:
        return tick
    out = {k: v for k, v in tick.items() if k != LEGACY_CPU_S}
    out.setdefault(CPU_MS, tick[LEGACY_CPU_S] * 1000)
    return out


def used(usage: dict[str, Any] | None) -> dict[str, int | None]:
    """What a job used, from its folded usage: ``cpu_ms``, ``cpu_user_ms``, ``cpu_sys_ms`` (the CPU
    counters' latest, which is their highest), ``mem_peak`` (the highest of the kernel's mark and of
    every sampled figure), ``mem_avg`` (the mean of the samples), ``mem_now`` (the latest sample), in
    milliseconds and bytes; None for what was never measured."""
    usage = usage or {}
    peak, mean, last = usage.get("peak") or {}, usage.get("mean") or {}, usage.get("last") or {}

    def whole(d: dict[str, Any], name: str) -> int | None:
        value = d.get(name)
        return None if value is None else int(round(float(value)))

    marks = [v for v in (whole(peak, MEMORY_RSS), whole(peak, MEM_PEAK)) if v is not None]
    return {"cpu_ms": whole(peak, CPU_MS), "cpu_user_ms": whole(peak, CPU_USER_MS),
            "cpu_sys_ms": whole(peak, CPU_SYS_MS), "mem_peak": max(marks) if marks else None,
            "mem_avg": whole(mean, MEMORY_RSS) if MEMORY_RSS in mean else (max(marks) if marks else None),
            "mem_now": whole(last, MEMORY_RSS)}
