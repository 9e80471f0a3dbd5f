"""Several pickers on one trace, side by side: the figures a site weighs a policy by.

A policy that cuts the mean bounded slowdown is only worth running if it starves no one, so every
row carries the maximum wait next to the means, and each picker is also given as a ratio to
``easy_backfill``, the policy most sites run and the literature compares against. The figures
themselves come from :func:`xce.sim.report.summary` (defined once, in :mod:`xce.sim.metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from xce.sim.engine import SimResult, simulate

#: The picker every other is measured against.
BASELINE = "easy_backfill"
#: Summary keys of a comparison row, in table order.
METRICS = ("wait_mean_s", "wait_p95_s", "wait_max_s", "bounded_slowdown_mean", "utilization", "jobs_finished")


@dataclass(frozen=True)
class Run:
    picker: str
    result: SimResult
    summary: dict[str, Any]


def default_pickers() -> list[str]:
    """Every picker the registry knows (entry-point plugins included), the baseline first."""
    from xce.core.pickers import registry

    names = list(registry.available())
    return sorted(names, key=lambda n: n != BASELINE)


def run_all(trace: Any, cluster: Any, pickers: Sequence[str], *, seed: int = 0,
            queues_from_trace: bool = False) -> list[Run]:
    """The same trace on the same cluster once per picker."""
    from xce.sim import report

    runs = []
    for name in pickers:
        result = simulate(trace, cluster.with_picker(name), seed=seed, queues_from_trace=queues_from_trace)
        runs.append(Run(name, result, report.summary(result)))
    return runs


def ratio(value: float, base: float) -> float | None:
    """``value / base``; None when there is nothing to divide by (a baseline of zero)."""
    return value / base if base else (1.0 if value == base else None)


def rows(summaries: Sequence[dict[str, Any]], baseline: str = BASELINE) -> list[dict[str, Any]]:
    """One row per run: its metrics and, when the baseline ran too, each metric over the baseline's."""
    base = next((s for s in summaries if s["picker"] == baseline), None)
    out = []
    for s in summaries:
        row: dict[str, Any] = {"picker": s["picker"], **{k: s[k] for k in METRICS},
                               "jobs_never_started": s["jobs_never_started"], "sim_wall_s": s["sim_wall_s"]}
        row["vs_" + baseline] = None if base is None else {k: ratio(s[k], base[k]) for k in METRICS}
        out.append(row)
    return out
