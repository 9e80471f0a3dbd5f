"""One self-contained HTML page per simulation (or comparison): summary, plots, per-picker table.

Self-contained means the file is all there is: styles inline, every plot embedded as an SVG data
URI, no script, no font, no link to anything. It opens from a mail attachment or on an air-gapped
cluster and shows the same thing everywhere.
"""

from __future__ import annotations

import base64
import html
import io
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from xce.formats import utc_minute

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from xce.sim.engine import SimResult

#: Columns of the per-picker table: summary key, heading, format.
TABLE: tuple[tuple[str, str, str], ...] = (
    ("picker", "picker", "{}"),
    ("jobs_finished", "jobs finished", "{:,}"),
    ("jobs_never_started", "never started", "{:,}"),
    ("wait_mean_s", "mean wait (s)", "{:,.1f}"),
    ("wait_median_s", "median wait (s)", "{:,.1f}"),
    ("wait_p95_s", "p95 wait (s)", "{:,.1f}"),
    ("wait_max_s", "max wait (s)", "{:,}"),
    ("bounded_slowdown_mean", "mean bounded slowdown", "{:,.2f}"),
    ("utilization", "utilization", "{:.1%}"),
    ("makespan_s", "makespan (s)", "{:,}"),
    ("peak_queue_length", "peak queue", "{:,}"),
    ("sim_wall_s", "simulated in (s)", "{:.2f}"),
)

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1180px;
padding:1em 1.5em;color:#1d1d1f;background:#fff}
h1{font-size:1.45em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#555;margin-top:0}table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
th,td{border:1px solid #d0d0d0;padding:.3em .6em;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dt{color:#555}dd{margin:0}figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-weight:600;margin-bottom:.3em}.warn{color:#a33}footer{color:#888;font-size:.8em;margin-top:2em}
"""


def figure_data_uri(fig: "Figure") -> str:
    """The figure as an SVG data URI (vector: it stays sharp when zoomed or printed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _fmt(value: Any, pattern: str) -> str:
    if value is None:
        return "-"
    try:
        return pattern.format(value)
    except (ValueError, TypeError):
        return str(value)


def picker_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """The per-picker table: one row per run (label, summary)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h, _ in TABLE)
    body = []
    for label, s in rows:
        cells = [f"<td>{html.escape(label)}</td>"]
        cells += [f"<td>{html.escape(_fmt(s.get(k), f))}</td>" for k, _, f in TABLE[1:]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _facts(s: dict[str, Any]) -> str:
    skipped = ", ".join(f"{k}: {v}" for k, v in s.get("skipped", {}).items()) or "none"
    facts = [
        ("trace", s.get("trace", "")),
        ("job lines", f"{s.get('job_lines', 0):,} ({s.get('jobs_simulated', 0):,} simulated, "
                      f"{s.get('skipped_total', 0):,} skipped: {skipped})"),
        ("cluster", f"{s.get('hosts', 0):,} hosts, {s.get('slots', 0):,} slots"),
    ]
    if s.get("unix_start_time") is not None:
        facts.append(("trace start", utc_minute(s["unix_start_time"])))
    if s.get("jobs_too_large"):
        sample = ", ".join(f"{j['jobid']} ({j['procs']} processors)" for j in s.get("too_large_sample", [])[:5])
        facts.append(("too large for the cluster", f"{s['jobs_too_large']:,} job(s) not simulated, e.g. {sample}"))
    if s.get("jobs_never_started"):
        facts.append(("never started", f"{s['jobs_never_started']:,} job(s)"))
    facts.append(("simulation", f"{s.get('events', 0):,} events, {s.get('rounds', 0):,} rounds in "
                                f"{s.get('sim_wall_s', 0):.2f} s"))
    return "<dl>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>" for k, v in facts) + "</dl>"


def render(title: str, subtitle: str, rows: Sequence[tuple[str, dict[str, Any]]],
           figures: Iterable[tuple[str, str, "Figure"]], notes: Sequence[str] = ()) -> str:
    """The page: a title, the run facts (of the first run), the per-picker table, then every figure."""
    from xce.sim.plots import _pyplot

    plt = _pyplot()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="sub">{html.escape(subtitle)}</p>',
    ]
    parts += [f'<p class="warn">{html.escape(n)}</p>' for n in notes]
    parts.append("<h2>Summary</h2>")
    if rows:
        parts.append(_facts(rows[0][1]))
    parts.append("<h2>By picker</h2>")
    parts.append(picker_table(rows))
    parts.append("<h2>Plots</h2>")
    for stem, caption, fig in figures:
        uri = figure_data_uri(fig)
        plt.close(fig)
        parts.append(f'<figure id="{html.escape(stem)}"><figcaption>{html.escape(caption)}</figcaption>'
                     f'<img alt="{html.escape(caption)}" src="{uri}"></figure>')
    parts.append(f"<footer>Written by xce sim on {utc_minute(time.time())}. "
                 "Bounded slowdown: max(1, (wait + run) / max(run, 10 s)). Utilization: busy slot-seconds / "
                 "(slots x time).</footer></body></html>")
    return "\n".join(parts) + "\n"


def write_run_report(path: str | Path, result: "SimResult", summary: dict[str, Any],
                     gantt_window: tuple[int, int] | None = None) -> Path:
    """``xce sim run --report``: one run."""
    from xce.sim.plots import describe, run_figures

    label = str(summary.get("picker") or result.cluster.config.job_pick_plugin)
    notes = []
    if summary.get("malformed"):
        notes.append(f"{summary['malformed']} malformed line(s) of the trace were skipped.")
    page = render(f"Simulation of {result.trace.name}", describe(result), [(label, summary)],
                  run_figures(result, gantt_window), notes)
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


def write_compare_report(path: str | Path, runs: Sequence[tuple[str, "SimResult"]],
                         summaries: Sequence[dict[str, Any]]) -> Path:
    """``xce sim compare --report``: several runs of one trace, one row and one curve per picker."""
    from xce.sim.plots import _runs_title, comparison_figures

    first = runs[0][1]
    page = render(f"Picker comparison on {first.trace.name}", _runs_title(runs),
                  [(label, s) for (label, _), s in zip(runs, summaries, strict=True)], comparison_figures(runs, summaries))
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path
