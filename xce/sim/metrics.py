"""The scheduling metrics of a simulation, computed in one place for the summary, the plots and comparisons.

Definitions follow the parallel-workloads literature so figures compare with published ones:

* wait = start - submit;
* bounded slowdown = ``max(1, (wait + run) / max(run, tau))`` with tau = 10 s, so that very short
  jobs do not dominate the mean (Feitelson et al., "Theory and practice in parallel job scheduling");
* stretch (Batsim's) = turnaround / execution time;
* utilization = busy processor-seconds / (slots x span), over any span of time.

Everything here is computed from a :class:`~xce.sim.engine.SimResult` with numpy (which the core
imports anyway), never by touching the simulation again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from xce.sim.engine import SimResult

TAU = 10  # seconds, the bounded-slowdown threshold

#: Run-time classes for "bounded slowdown by run time": (upper bound in s, label).
RUNTIME_CLASSES: tuple[tuple[float, str], ...] = (
    (60, "< 1 min"), (600, "1-10 min"), (3600, "10 min-1 h"), (4 * 3600, "1-4 h"), (24 * 3600, "4-24 h"),
    (float("inf"), ">= 1 day"))

#: Bin widths a time axis may use, smallest first (seconds, label).
NICE_BINS: tuple[tuple[int, str], ...] = (
    (60, "1 min"), (300, "5 min"), (900, "15 min"), (3600, "1 h"), (3 * 3600, "3 h"), (6 * 3600, "6 h"),
    (12 * 3600, "12 h"), (86400, "1 day"), (2 * 86400, "2 days"), (7 * 86400, "1 week"), (30 * 86400, "30 days"))


def bounded_slowdown(wait: float, run: float, tau: float = TAU) -> float:
    return max(1.0, (wait + run) / max(run, tau))


def linear_percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)``, the same float to the last bit (not for NaNs).

    numpy's default (linear) method, done here because ``np.percentile`` imports ``numpy.ma`` on
    its first call, which costs more than a small simulation's whole summary.
    """
    n = len(values)
    if not n:
        raise ValueError("the percentile of no values")
    v = np.sort(values)
    index = (n - 1) * (q / 100)
    if index >= n - 1:
        return float(v[-1])
    below = int(index)  # index >= 0: the floor
    gamma = index - below
    a, b = float(v[below]), float(v[below + 1])
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma  # numpy's _lerp


@dataclass(frozen=True)
class JobMetrics:
    """Per finished job (in trace order): its trace index and the figures the plots need."""

    index: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    wait: np.ndarray
    run: np.ndarray
    procs: np.ndarray
    bsld: np.ndarray

    def __len__(self) -> int:
        return len(self.index)


def job_metrics(result: "SimResult", tau: float = TAU) -> JobMetrics:
    """Wait, run and bounded slowdown of every job that started and finished."""
    tr = result.trace
    start = np.frombuffer(result.start, dtype=np.int64)
    end = np.frombuffer(result.end, dtype=np.int64)
    idx = np.flatnonzero((start >= 0) & (end >= 0))
    submit = np.frombuffer(tr.submit, dtype=np.int64)[idx]
    run = np.minimum(np.frombuffer(tr.run, dtype=np.int64), _limits(tr))[idx]
    s, e = start[idx], end[idx]
    wait = s - submit
    bsld = np.maximum(1.0, (e - submit) / np.maximum(run, tau)) if len(idx) else np.zeros(0)
    return JobMetrics(index=idx, submit=submit, start=s, end=e, wait=wait, run=run,
                      procs=np.frombuffer(tr.procs, dtype=np.int64)[idx], bsld=bsld)


def _limits(trace) -> np.ndarray:
    """Each job's requested time as the cap on its run (no cap where the trace has none)."""
    req = np.frombuffer(trace.req_time, dtype=np.int64)
    return np.where(req > 0, req, np.iinfo(np.int64).max)


def size_class(procs: int) -> int:
    """Power-of-two class: 0 for 1 processor, 1 for 2, 2 for 3-4, 3 for 5-8, ..."""
    return int(procs - 1).bit_length()


def size_label(cls: int) -> str:
    if cls == 0:
        return "1"
    lo, hi = (1 << (cls - 1)) + 1, 1 << cls
    return str(hi) if lo == hi else f"{lo}-{hi}"


def runtime_class(run: float) -> int:
    for k, (upper, _) in enumerate(RUNTIME_CLASSES):
        if run < upper:
            return k
    return len(RUNTIME_CLASSES) - 1


@dataclass(frozen=True)
class ClassStats:
    labels: list[str]
    counts: list[int]
    mean: list[float]
    median: list[float]
    p95: list[float]


def _stats(keys: np.ndarray, values: np.ndarray, labels: Sequence[str]) -> ClassStats:
    counts, mean, median, p95 = [], [], [], []
    for k in range(len(labels)):
        v = values[keys == k]
        counts.append(int(len(v)))
        mean.append(float(v.mean()) if len(v) else 0.0)
        median.append(float(np.median(v)) if len(v) else 0.0)
        p95.append(float(np.percentile(v, 95)) if len(v) else 0.0)
    return ClassStats(list(labels), counts, mean, median, p95)


def bsld_by_size(m: JobMetrics) -> ClassStats:
    """Bounded slowdown per power-of-two job size, up to the largest job's class."""
    keys = np.array([size_class(int(p)) for p in m.procs], dtype=np.int64) if len(m) else np.zeros(0, np.int64)
    top = int(keys.max()) + 1 if len(keys) else 1
    return _stats(keys, m.bsld, [size_label(c) for c in range(top)])


def bsld_by_runtime(m: JobMetrics) -> ClassStats:
    keys = np.searchsorted(np.array([u for u, _ in RUNTIME_CLASSES[:-1]]), m.run, side="right")
    return _stats(keys, m.bsld, [label for _, label in RUNTIME_CLASSES])


def bin_width(span: float, max_bins: int = 400) -> tuple[int, str]:
    """The smallest "nice" width that cuts ``span`` seconds into at most ``max_bins`` bins."""
    for width, label in NICE_BINS:
        if span / width <= max_bins:
            return width, label
    width = int(np.ceil(span / max_bins / 86400)) * 86400
    return width, f"{width // 86400} days"


def _edges(t0: int, t1: int, width: int) -> np.ndarray:
    n = max(1, int(np.ceil((t1 - t0) / width)))
    return t0 + width * np.arange(n + 1, dtype=np.int64)


def _integral(t: np.ndarray, v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Integral of the step function (value ``v[k]`` from ``t[k]`` to ``t[k+1]``) from ``t[0]`` to ``x``."""
    cum = np.concatenate(([0.0], np.cumsum(v[:-1] * np.diff(t).astype(np.float64))))
    k = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
    return cum[k] + v[k] * np.maximum(x - t[k], 0)


@dataclass(frozen=True)
class Binned:
    """A series cut into equal bins: ``edges`` has one more entry than each column."""

    edges: np.ndarray
    width: int
    width_label: str
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _series(result: "SimResult", column: str) -> tuple[np.ndarray, np.ndarray]:
    t = np.frombuffer(result.series_t, dtype=np.int64)
    v = np.frombuffer(getattr(result, column), dtype=np.int64)
    return t, v


def binned(result: "SimResult", column: str, max_bins: int = 400, width: int | None = None,
           t_range: tuple[int, int] | None = None) -> Binned:
    """Time-weighted mean, minimum and maximum of ``series_busy`` or ``series_pending`` per bin.

    The minimum and maximum are exact (every value the step function takes inside a bin counts, the
    one carried in from before the bin included), so a peak is never lost to thinning.
    """
    t, v = _series(result, column)
    if len(t) == 0:
        z = np.zeros(1)
        return Binned(np.array([0, 1]), 1, "1 s", z, z, z)
    t0, t1 = t_range if t_range is not None else (int(t[0]), int(t[-1]))
    t1 = max(t1, t0 + 1)
    if width is None:
        width, label = bin_width(t1 - t0, max_bins)
    else:
        label = f"{width} s"
    edges = _edges(t0, t1, width)
    vf = v.astype(np.float64)
    mean = np.diff(_integral(t, vf, edges)) / width
    first = np.clip(np.searchsorted(t, edges[:-1], side="right") - 1, 0, len(t) - 1)
    last = np.clip(np.searchsorted(t, edges[1:], side="left") - 1, 0, len(t) - 1)
    last = np.maximum(first, last)
    low = np.empty(len(first))
    high = np.empty(len(first))
    for j in range(len(first)):
        seg = v[first[j]:last[j] + 1]
        low[j], high[j] = seg.min(), seg.max()
    before = edges[:-1] < t[0]
    low[before] = 0
    return Binned(edges, width, label, mean, low, high)


def utilization(result: "SimResult", t_range: tuple[int, int] | None = None) -> float:
    """Busy slot-seconds over (slots x span) between the first submission and the last end."""
    slots = result.cluster.total_slots
    t, v = _series(result, "series_busy")
    if not slots or len(t) < 2:
        return 0.0
    a, b = t_range if t_range is not None else (int(t[0]), int(t[-1]))
    if b <= a:
        return 0.0
    busy = _integral(t, v.astype(np.float64), np.array([a, b]))
    return float((busy[1] - busy[0]) / (slots * (b - a)))


def ecdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and the share of values at or below each."""
    x = np.sort(values)
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)
