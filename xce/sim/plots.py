"""Plots of a simulation, and of several simulations side by side, as PNG and SVG.

matplotlib is imported here only, and only when plotting: it costs about half a second to import
and most runs (tests, benchmarks, ``--json``) never draw.

Every plot says what it shows in its title: the trace, the cluster and the picker. Time series are
binned, never thinned: utilization is the time-weighted mean per bin (a 92-day trace at one point
per event is a barcode, at one point per 6 hours a curve), and the queue keeps each bin's exact
minimum and maximum as an envelope around the mean, so no peak is lost. When the trace header
gives ``UnixStartTime`` the time axis shows the trace's own dates (in its ``TimeZoneString``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from xce.formats import compact
from xce.sim import metrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from xce.sim.engine import SimResult

FORMATS = ("png", "svg")
DPI = 110
#: At most this many jobs are drawn in a Gantt chart; a wider window is cut to its first ones.
GANTT_MAX_JOBS = 5000
#: Wait-time axis ticks: what a person reads off a CDF.
_WAIT_TICKS = ((0, "0"), (1, "1 s"), (10, "10 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"),
               (6 * 3600, "6 h"), (86400, "1 day"), (7 * 86400, "1 week"), (30 * 86400, "30 days"))


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "xce", "svg.fonttype": "path", "axes.grid": True, "grid.alpha": 0.3,
                         "figure.dpi": DPI})
    return plt


def describe(result: "SimResult") -> str:
    """``trace on N hosts x S slots, picker P``: the subtitle of every plot of this run."""
    hosts = result.cluster.hosts
    slots = {int(h.values.get("slots", 0)) for h in hosts}
    shape = f"{len(hosts)} hosts x {slots.pop()} slot(s)" if len(slots) == 1 else \
        f"{len(hosts)} hosts, {result.cluster.total_slots} slots"
    return f"{result.trace.name} on {shape}, picker {result.cluster.config.job_pick_plugin}"


# -- the time axis -----------------------------------------------------------------------------

@dataclass(frozen=True)
class TimeAxis:
    """Trace seconds to what the x axis shows: dates when the trace has them, else days."""

    unix_start: int | None
    tz: tzinfo
    origin: int

    @classmethod
    def of(cls, result: "SimResult", origin: int) -> "TimeAxis":
        tz: tzinfo = timezone.utc
        name = result.trace.timezone
        if name:
            try:
                from zoneinfo import ZoneInfo

                tz = ZoneInfo(name)
            except Exception:  # an unknown zone name in a header: dates in UTC, said in the label
                tz = timezone.utc
        return cls(result.trace.unix_start, tz, origin)

    @property
    def dated(self) -> bool:
        return self.unix_start is not None

    def __call__(self, seconds: Any) -> Any:
        s = np.asarray(seconds, dtype=np.float64)
        if not self.dated:
            return (s - self.origin) / 86400.0
        import matplotlib.dates as mdates

        base = datetime.fromtimestamp(self.unix_start, self.tz)  # type: ignore[arg-type]
        return mdates.date2num(base) + s / 86400.0

    def width(self, seconds: float) -> float:
        return seconds / 86400.0

    def label(self) -> str:
        if not self.dated:
            return "days since the first submission"
        return f"date ({getattr(self.tz, 'key', 'UTC')})"

    def decorate(self, ax: Any) -> None:
        ax.set_xlabel(self.label())
        if self.dated:
            import matplotlib.dates as mdates

            locator = mdates.AutoDateLocator(tz=self.tz)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=self.tz))


def _t_range(result: "SimResult") -> tuple[int, int]:
    t = result.series_t
    return (int(t[0]), int(t[-1])) if len(t) else (0, 1)


# -- one run -----------------------------------------------------------------------------------

def utilization_figure(result: "SimResult") -> "Figure":
    plt = _pyplot()
    slots = max(1, result.cluster.total_slots)
    b = metrics.binned(result, "series_busy")
    axis = TimeAxis.of(result, int(b.edges[0]))
    x = axis(b.edges)
    fig, ax = plt.subplots(figsize=(10, 4))
    y = np.append(b.mean / slots * 100, b.mean[-1] / slots * 100)
    ax.fill_between(x, y, step="post", alpha=0.35, color="tab:blue", lw=0)
    ax.step(x, y, where="post", color="tab:blue", lw=1.0, label=f"mean per {b.width_label}")
    overall = metrics.utilization(result) * 100
    ax.axhline(overall, color="black", lw=0.8, ls="--", label=f"whole run: {overall:.1f}%")
    ax.set_ylim(0, 105)
    ax.set_ylabel("utilization (% of slots busy)")
    axis.decorate(ax)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"Utilization ({b.width_label} means)\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def queue_figure(result: "SimResult") -> "Figure":
    plt = _pyplot()
    b = metrics.binned(result, "series_pending")
    axis = TimeAxis.of(result, int(b.edges[0]))
    x = axis(b.edges)
    fig, ax = plt.subplots(figsize=(10, 4))
    hi = np.append(b.high, b.high[-1])
    lo = np.append(b.low, b.low[-1])
    mean = np.append(b.mean, b.mean[-1])
    ax.fill_between(x, lo, hi, step="post", color="tab:red", alpha=0.25, lw=0, label=f"min-max per {b.width_label}")
    ax.step(x, mean, where="post", color="tab:red", lw=1.0, label="time-weighted mean")
    peak = int(max(result.series_pending, default=0))
    if peak:
        k = int(np.argmax(np.frombuffer(result.series_pending, dtype=np.int64)))
        ax.plot([axis(result.series_t[k])], [peak], marker="v", color="black", ls="none",
                label=f"peak: {peak} jobs")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("pending jobs")
    axis.decorate(ax)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Queue length\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def _wait_axis(ax: Any, top: float) -> None:
    ax.set_xscale("symlog", linthresh=1.0)
    ticks = [(v, lab) for v, lab in _WAIT_TICKS if v <= max(top, 1) * 1.5]
    ax.set_xticks([v for v, _ in ticks], [lab for _, lab in ticks])
    ax.set_xlim(0, max(top, 1) * 1.5)


def wait_cdf_figure(result: "SimResult") -> "Figure":
    plt = _pyplot()
    m = metrics.job_metrics(result)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    x, y = metrics.ecdf(m.wait)
    if len(x):
        ax.step(np.concatenate(([0], x)), np.concatenate(([0], y)) * 100, where="post", color="tab:blue")
        for q, style in ((50, ":"), (95, "--")):
            v = float(np.percentile(m.wait, q))
            ax.axvline(v, color="grey", ls=style, lw=0.8, label=f"p{q}: {compact(v)}")
        zero = float((m.wait == 0).mean() * 100)
        ax.plot([], [], " ", label=f"{zero:.1f}% of jobs start at once")
        ax.legend(loc="lower right", fontsize=8)
    _wait_axis(ax, float(x[-1]) if len(x) else 1.0)
    ax.set_ylim(0, 101)
    ax.set_xlabel("wait (start - submit)")
    ax.set_ylabel("% of jobs waiting at most this long")
    ax.set_title(f"Wait-time CDF ({len(m)} jobs)\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def _class_bars(ax: Any, stats: metrics.ClassStats, xlabel: str) -> None:
    pos = np.arange(len(stats.labels))
    ax.bar(pos, stats.mean, color="tab:purple", alpha=0.75, label="mean")
    ax.plot(pos, stats.median, "o", color="black", ms=4, label="median")
    ax.plot(pos, stats.p95, "_", color="black", ms=12, mew=1.5, label="p95")
    for p, n, mean in zip(pos, stats.counts, stats.mean, strict=True):
        ax.annotate(f"n={n}", (p, max(mean, 1.0)), textcoords="offset points", xytext=(0, 3), ha="center",
                    fontsize=7, color="dimgrey")
    ax.set_xticks(pos, stats.labels, rotation=45 if len(pos) > 8 else 0, ha="right" if len(pos) > 8 else "center")
    _log_y(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"bounded slowdown (tau {metrics.TAU} s)")
    ax.legend(loc="upper left", fontsize=8)


def _log_y(ax: Any) -> None:
    """Slowdowns start at 1 and spread over decades: a log axis labelled in plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_yscale("log")
    ax.set_ylim(bottom=0.9, top=max(ax.get_ylim()[1] * 1.5, 2))
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def bsld_size_figure(result: "SimResult") -> "Figure":
    plt = _pyplot()
    stats = metrics.bsld_by_size(metrics.job_metrics(result))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _class_bars(ax, stats, "job size (processors)")
    ax.set_title(f"Bounded slowdown by job size\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def bsld_runtime_figure(result: "SimResult") -> "Figure":
    plt = _pyplot()
    stats = metrics.bsld_by_runtime(metrics.job_metrics(result))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    _class_bars(ax, stats, "run time")
    ax.set_title(f"Bounded slowdown by run time\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def default_gantt_window(result: "SimResult") -> tuple[int, int]:
    """One day (or the whole run, if shorter) centred on the moment the queue was longest."""
    t0, t1 = _t_range(result)
    span = min(86400, t1 - t0)
    if not len(result.series_pending) or span <= 0:
        return t0, t0 + max(span, 1)
    k = int(np.argmax(np.frombuffer(result.series_pending, dtype=np.int64)))
    mid = int(result.series_t[k])
    a = min(max(t0, mid - span // 2), t1 - span)
    return a, a + span


def gantt_figure(result: "SimResult", window: tuple[int, int] | None = None) -> "Figure":
    """Jobs as rectangles: x = time, y = the slots they held (resource ids, as Batsim counts them).

    ``window`` is in trace seconds after the first submission; colour is the job's user.
    """
    from matplotlib.collections import PolyCollection

    from xce.sim.resources import resource_intervals

    plt = _pyplot()
    t0, _ = _t_range(result)
    a, b = (t0 + window[0], t0 + window[1]) if window is not None else default_gantt_window(result)
    start, end = result.start, result.end
    jobs = [i for i in range(len(start)) if start[i] >= 0 and start[i] < b and (end[i] < 0 or end[i] > a)]
    cut = len(jobs) > GANTT_MAX_JOBS
    jobs = jobs[:GANTT_MAX_JOBS]
    intervals = resource_intervals(result)
    axis = TimeAxis.of(result, t0)
    cmap = plt.get_cmap("tab20")
    users = result.trace.user
    verts, colors = [], []
    last = max(result.series_t, default=b)
    for i in jobs:
        s = max(start[i], a)
        e = min(end[i] if end[i] >= 0 else last, b)
        xs, xe = axis(s), axis(e)
        for lo, hi in intervals(i):
            verts.append([(xs, lo), (xe, lo), (xe, hi + 1), (xs, hi + 1)])
            colors.append(cmap(int(users[i]) % 20))
    fig, ax = plt.subplots(figsize=(11, 5.5))
    ax.add_collection(PolyCollection(verts, facecolors=colors, edgecolors="black", linewidths=0.2))
    ax.set_xlim(axis(a), axis(b))
    ax.set_ylim(0, max(1, result.cluster.total_slots))
    ax.set_ylabel("resource (slot id)")
    ax.grid(False)
    axis.decorate(ax)
    days = (a - t0) / 86400, (b - t0) / 86400
    more = f", first {GANTT_MAX_JOBS} shown" if cut else ""
    ax.set_title(f"Gantt chart, day {days[0]:.1f} to {days[1]:.1f} ({len(jobs)} jobs{more}; colour = user)\n"
                 f"{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


def wait_by_queue_figure(result: "SimResult") -> "Figure | None":
    """Waits per queue, only when the run had more than one queue."""
    m = metrics.job_metrics(result)
    by_queue: dict[str, list[float]] = {}
    for i, w in zip(m.index.tolist(), m.wait.tolist(), strict=True):
        by_queue.setdefault(result.queue_of[i], []).append(w)
    if len(by_queue) < 2:
        return None
    plt = _pyplot()
    names = sorted(by_queue)
    fig, ax = plt.subplots(figsize=(max(6, len(names) * 0.9), 4.5))
    ax.boxplot([by_queue[n] for n in names], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), [f"{n}\n(n={len(by_queue[n])})" for n in names])
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylabel("wait (s)")
    ax.set_title(f"Waits per queue\n{describe(result)}", fontsize=10)
    fig.tight_layout()
    return fig


#: The plots of one run: file stem -> title (for the HTML report) and how to draw it.
RUN_PLOTS: tuple[tuple[str, str], ...] = (
    ("utilization", "Utilization over time"),
    ("queue", "Queue length"),
    ("wait_cdf", "Wait-time CDF"),
    ("bsld_by_size", "Bounded slowdown by job size"),
    ("bsld_by_runtime", "Bounded slowdown by run time"),
    ("gantt", "Gantt chart"),
    ("wait_by_queue", "Waits per queue"),
)


def run_figures(result: "SimResult", gantt_window: tuple[int, int] | None = None) -> Iterable[tuple[str, str, "Figure"]]:
    """(file stem, title, figure) for every plot of one run; the caller closes each figure."""
    draw = {"utilization": utilization_figure, "queue": queue_figure, "wait_cdf": wait_cdf_figure,
            "bsld_by_size": bsld_size_figure, "bsld_by_runtime": bsld_runtime_figure,
            "gantt": lambda r: gantt_figure(r, gantt_window), "wait_by_queue": wait_by_queue_figure}
    for stem, title in RUN_PLOTS:
        fig = draw[stem](result)
        if fig is not None:
            yield stem, title, fig


def save(fig: "Figure", out: Path, stem: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    files = []
    for fmt in formats:
        path = out / f"{stem}.{fmt}"
        fig.savefig(path, dpi=DPI, metadata={"Date": None} if fmt == "svg" else None)
        files.append(path)
    return files


def write_plots(result: "SimResult", out: str | Path, formats: Sequence[str] = FORMATS,
                gantt_window: tuple[int, int] | None = None) -> list[Path]:
    """Every plot of one run into ``out``, in each of ``formats``."""
    plt = _pyplot()
    out = Path(out)
    files: list[Path] = []
    for stem, _, fig in run_figures(result, gantt_window):
        files += save(fig, out, stem, formats)
        plt.close(fig)
    return files


# -- several runs ------------------------------------------------------------------------------

Runs = Sequence[tuple[str, "SimResult"]]

#: Scalar metrics compared across runs: summary key, label, unit scale.
SCALARS: tuple[tuple[str, str], ...] = (
    ("wait_mean_s", "mean wait (s)"), ("wait_p95_s", "p95 wait (s)"),
    ("bounded_slowdown_mean", "mean bounded slowdown"), ("utilization", "utilization"),
    ("makespan_s", "makespan (s)"), ("peak_queue_length", "peak queue (jobs)"))


def _runs_title(runs: Runs) -> str:
    import textwrap

    r = runs[0][1]
    base = describe(r).rsplit(", picker ", 1)[0]
    # Eight pickers overflow one line of a figure's width: wrap rather than cut.
    return "\n".join(textwrap.wrap(f"{base}; " + ", ".join(label for label, _ in runs), 110))


def compare_wait_cdf_figure(runs: Runs) -> "Figure":
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    top = 1.0
    for label, r in runs:
        m = metrics.job_metrics(r)
        x, y = metrics.ecdf(m.wait)
        if len(x):
            ax.step(np.concatenate(([0], x)), np.concatenate(([0], y)) * 100, where="post",
                    label=f"{label} (p95 {compact(float(np.percentile(m.wait, 95)))})")
            top = max(top, float(x[-1]))
    _wait_axis(ax, top)
    ax.set_ylim(0, 101)
    ax.set_xlabel("wait (start - submit)")
    ax.set_ylabel("% of jobs waiting at most this long")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"Wait-time CDF by picker\n{_runs_title(runs)}", fontsize=10)
    fig.tight_layout()
    return fig


def _grouped(runs: Runs, stats_of: Any, xlabel: str, title: str) -> "Figure":
    plt = _pyplot()
    stats = [(label, stats_of(metrics.job_metrics(r))) for label, r in runs]
    labels = max((s.labels for _, s in stats), key=len)
    fig, ax = plt.subplots(figsize=(max(8, len(labels) * 0.6 * max(1, len(runs) / 2)), 4.5))
    width = 0.8 / max(1, len(stats))
    pos = np.arange(len(labels))
    for k, (label, s) in enumerate(stats):
        means = s.mean + [0.0] * (len(labels) - len(s.mean))
        ax.bar(pos + (k - (len(stats) - 1) / 2) * width, means, width, label=label)
    ax.set_xticks(pos, labels, rotation=45 if len(pos) > 8 else 0, ha="right" if len(pos) > 8 else "center")
    _log_y(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"mean bounded slowdown (tau {metrics.TAU} s)")
    ax.legend(fontsize=8)
    ax.set_title(f"{title}\n{_runs_title(runs)}", fontsize=10)
    fig.tight_layout()
    return fig


def compare_series_figure(runs: Runs, column: str) -> "Figure":
    plt = _pyplot()
    t0 = min(int(r.series_t[0]) for _, r in runs if len(r.series_t)) if any(len(r.series_t) for _, r in runs) else 0
    t1 = max((int(r.series_t[-1]) for _, r in runs if len(r.series_t)), default=t0 + 1)
    width, wlabel = metrics.bin_width(max(1, t1 - t0))
    axis = TimeAxis.of(runs[0][1], t0)
    fig, ax = plt.subplots(figsize=(10, 4))
    for label, r in runs:
        b = metrics.binned(r, column, width=width, t_range=(t0, t1))
        scale = 100 / max(1, r.cluster.total_slots) if column == "series_busy" else 1
        y = np.append(b.mean, b.mean[-1]) * scale
        ax.step(axis(b.edges), y, where="post", lw=1.0, label=label)
    what = "utilization (% of slots busy)" if column == "series_busy" else "pending jobs (time-weighted mean)"
    ax.set_ylabel(what)
    ax.set_ylim(bottom=0)
    axis.decorate(ax)
    ax.legend(fontsize=8)
    name = "Utilization" if column == "series_busy" else "Queue length"
    ax.set_title(f"{name} by picker ({wlabel} means)\n{_runs_title(runs)}", fontsize=10)
    fig.tight_layout()
    return fig


def compare_scalars_figure(runs: Runs, summaries: Sequence[dict[str, Any]]) -> "Figure":
    """One small panel per scalar metric, one bar per run."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(11, 6))
    labels = [label for label, _ in runs]
    for ax, (key, name) in zip(axes.flat, SCALARS, strict=True):
        values = [float(s.get(key, 0.0)) * (100 if key == "utilization" else 1) for s in summaries]
        ax.bar(range(len(values)), values, color=[f"C{k}" for k in range(len(values))])
        ax.set_xticks(range(len(values)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(name + (" %" if key == "utilization" else ""), fontsize=9)
    fig.suptitle(f"Scheduling metrics by picker\n{_runs_title(runs)}", fontsize=10)
    fig.tight_layout()
    return fig


COMPARE_PLOTS: tuple[tuple[str, str], ...] = (
    ("compare_metrics", "Metrics by picker"),
    ("compare_wait_cdf", "Wait-time CDF by picker"),
    ("compare_bsld_by_size", "Bounded slowdown by job size, by picker"),
    ("compare_bsld_by_runtime", "Bounded slowdown by run time, by picker"),
    ("compare_utilization", "Utilization by picker"),
    ("compare_queue", "Queue length by picker"),
)


def comparison_figures(runs: Runs, summaries: Sequence[dict[str, Any]]) -> Iterable[tuple[str, str, "Figure"]]:
    """(file stem, title, figure) comparing ``runs`` (label, result), one plot per metric."""
    draw = {
        "compare_metrics": lambda: compare_scalars_figure(runs, summaries),
        "compare_wait_cdf": lambda: compare_wait_cdf_figure(runs),
        "compare_bsld_by_size": lambda: _grouped(runs, metrics.bsld_by_size, "job size (processors)",
                                                 "Bounded slowdown by job size, by picker"),
        "compare_bsld_by_runtime": lambda: _grouped(runs, metrics.bsld_by_runtime, "run time",
                                                    "Bounded slowdown by run time, by picker"),
        "compare_utilization": lambda: compare_series_figure(runs, "series_busy"),
        "compare_queue": lambda: compare_series_figure(runs, "series_pending"),
    }
    for stem, title in COMPARE_PLOTS:
        yield stem, title, draw[stem]()


def write_comparison_plots(runs: Runs, summaries: Sequence[dict[str, Any]], out: str | Path,
                           formats: Sequence[str] = FORMATS) -> list[Path]:
    """For ``xce sim compare``: every comparison plot into ``out``."""
    plt = _pyplot()
    out = Path(out)
    files: list[Path] = []
    for stem, _, fig in comparison_figures(runs, summaries):
        files += save(fig, out, stem, formats)
        plt.close(fig)
    return files


def write_wait_distribution(runs: Runs, path: str | Path) -> Path:
    """For ``xce sim compare --plot FILE``: the wait-time CDFs of every run in one figure, in the
    format the file's suffix names (one of :data:`FORMATS` or ``pdf``)."""
    plt = _pyplot()
    path = Path(path)
    fig = compare_wait_cdf_figure(runs)
    fig.savefig(path, dpi=DPI, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return path
