"""Two simulations of one workload side by side, and how far the baseline is from what really happened.

The figures are the simulator's own (:mod:`xce.sim.metrics`: wait, bounded slowdown with tau = 10 s,
utilization over the run's span, makespan), for all jobs and per queue and per user, so that the
difference a policy makes is read in the definitions the simulation report uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xce.sim import metrics

if TYPE_CHECKING:
    from xce.sim.engine import SimResult

#: A simulated start within this many seconds of the real one "agrees" with reality.
AGREEMENT_S = 60
FIGURES = (("jobs", "jobs"), ("wait_mean_s", "mean wait (s)"), ("wait_p95_s", "p95 wait (s)"),
           ("bsld_mean", "mean bounded slowdown"), ("utilization", "utilization"), ("makespan_s", "makespan (s)"))
GROUP_FIGURES = FIGURES[:4]


def _p95(values: np.ndarray) -> float:
    if not len(values):
        return 0.0
    s = np.sort(values)
    return float(s[max(1, int(np.ceil(0.95 * len(s)))) - 1])  # nearest rank, as the sim summary


def _figures(m: metrics.JobMetrics, sel: np.ndarray | None = None) -> dict[str, float]:
    wait, bsld = (m.wait, m.bsld) if sel is None else (m.wait[sel], m.bsld[sel])
    return {"jobs": int(len(wait)), "wait_mean_s": float(wait.mean()) if len(wait) else 0.0,
            "wait_p95_s": _p95(wait), "bsld_mean": float(bsld.mean()) if len(bsld) else 0.0}


def figures(result: "SimResult") -> dict[str, Any]:
    """All jobs, and per queue and per user, of one run."""
    m = metrics.job_metrics(result)
    out: dict[str, Any] = {"all": _figures(m)}
    if len(m):
        first, last = int(m.submit.min()), int(m.end.max())
        out["all"]["makespan_s"] = last - first
        slots = result.cluster.total_slots
        out["all"]["utilization"] = float((m.procs * m.run).sum()) / (slots * (last - first)) \
            if slots and last > first else 0.0
    else:
        out["all"].update(makespan_s=0, utilization=0.0)
    names = result.trace.names
    queue = np.array([result.queue_of[i] for i in m.index], dtype=object)
    user = np.array([names.user[i] if names is not None else f"u{result.trace.user[i]}" for i in m.index],
                    dtype=object)
    for label, column in (("queue", queue), ("user", user)):
        out[label] = {str(k): _figures(m, column == k) for k in sorted(set(column.tolist()))}
    return out


def diff(base: dict[str, Any], alt: dict[str, Any]) -> dict[str, Any]:
    """Alternative minus baseline, figure by figure (groups present in either)."""
    def one(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
        return {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b)}

    out: dict[str, Any] = {"all": one(base["all"], alt["all"])}
    for g in ("queue", "user"):
        out[g] = {k: one(base[g].get(k, {}), alt[g].get(k, {})) for k in sorted(set(base[g]) | set(alt[g]))}
    return out


def agreement(result: "SimResult", tolerance_s: int = AGREEMENT_S) -> dict[str, Any]:
    """How many jobs the simulation started within ``tolerance_s`` of when they really started."""
    names = result.trace.names
    if names is None:
        return {"jobs": 0, "within": 0, "share": None}
    sim = np.frombuffer(result.start, dtype=np.int64)
    real = np.frombuffer(names.real_start, dtype=np.int64)
    ok = sim >= 0
    delta = sim[ok] - real[ok]
    absd = np.abs(delta)
    within = int((absd <= tolerance_s).sum())
    n = int(len(sim))
    worst = [{"jobid": int(result.trace.jobid[i]), "simulated_minus_real_s": int(sim[i] - real[i])}
             for i in np.flatnonzero(ok)[np.argsort(-absd, kind="stable")[:5]] if abs(sim[i] - real[i]) > tolerance_s]
    return {"jobs": n, "within": within, "share": within / n if n else None, "tolerance_s": tolerance_s,
            "never_started": int((~ok).sum()), "median_abs_s": float(np.median(absd)) if len(absd) else 0.0,
            "median_s": float(np.median(delta)) if len(delta) else 0.0,
            "max_abs_s": int(absd.max()) if len(absd) else 0, "late": int((delta > tolerance_s).sum()),
            "early": int((delta < -tolerance_s).sum()), "worst": worst}
