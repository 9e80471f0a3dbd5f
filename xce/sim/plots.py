"""PNG plots of a simulation. matplotlib is imported here only, and only when plotting, because it
costs about a second to import and most runs (tests, benchmarks, --json) never draw."""

from __future__ import annotations

from pathlib import Path

from xce.sim.engine import SimResult

MAX_POINTS = 5000


def _thin(xs, *cols):
    """Every k-th point so that a 400,000-step series plots fast; the shape survives."""
    k = max(1, len(xs) // MAX_POINTS)
    return (list(xs[::k]), *[list(c[::k]) for c in cols])


def write_plots(result: SimResult, out: str | Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    tr = result.trace
    slots = max(1, result.cluster.total_slots)
    files: list[Path] = []

    t, busy, pend = _thin(result.series_t, result.series_busy, result.series_pending)
    hours = [(x - (t[0] if t else 0)) / 3600 for x in t]
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    a1.step(hours, [b / slots * 100 for b in busy], where="post", lw=0.7)
    a1.set_ylabel("utilization (%)")
    a1.set_ylim(0, 105)
    a2.step(hours, pend, where="post", lw=0.7, color="tab:red")
    a2.set_ylabel("pending jobs")
    a2.set_xlabel("hours since the first submission")
    fig.suptitle("Utilization and queue length")
    fig.tight_layout()
    files.append(out / "utilization_queue.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    started = [i for i in range(len(tr)) if result.start[i] >= 0]
    waits = [result.start[i] - tr.submit[i] for i in started]
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.hist([w / 60 for w in waits], bins=60, log=True)
    ax.set_xlabel("wait (minutes)")
    ax.set_ylabel("jobs (log scale)")
    ax.set_title("Wait-time distribution")
    fig.tight_layout()
    files.append(out / "wait_hist.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    by_queue: dict[str, list[float]] = {}
    for i in started:
        by_queue.setdefault(result.queue_of[i], []).append((result.start[i] - tr.submit[i]) / 60)
    names = sorted(by_queue)
    fig, ax = plt.subplots(figsize=(max(6, len(names) * 0.8), 5))
    if names:
        ax.boxplot([by_queue[n] for n in names], showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_ylabel("wait (minutes)")
    ax.set_title("Waits per queue")
    fig.tight_layout()
    files.append(out / "wait_by_queue.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)
    return files
