"""Small line charts as inline SVG, drawn on the server: a job's memory and CPU over its run.

No charting library and no script: the chart is part of the page's HTML, so it shows on a phone,
in a screenshot and with JavaScript off, and the page stays within its content security policy.
"""

from __future__ import annotations

from typing import Any, Callable

from markupsafe import Markup, escape

#: Samples are a report interval apart, a little more or less each time, so a rate between two
#: neighbouring ones jitters; the rate is taken over at least this many seconds instead.
CPU_WINDOW_S = 5.0


def usage_lines(series: dict[str, Any] | None) -> dict[str, list[tuple[float, float]]]:
    """Memory (bytes) and CPU (cores in use: growth of ``cpu_ms`` over a window) against seconds since start."""
    points = (series or {}).get("points") or []
    memory = [(float(t), float(v["memory_rss"])) for t, v in points if isinstance(v.get("memory_rss"), (int, float))]
    cpu_points = [(float(t), float(v["cpu_ms"]) / 1000) for t, v in points if isinstance(v.get("cpu_ms"), (int, float))]
    cpu: list[tuple[float, float]] = []
    start = 0
    for t, c in cpu_points[1:]:
        while start + 1 < len(cpu_points) and t - cpu_points[start + 1][0] >= CPU_WINDOW_S:
            start += 1
        t0, c0 = cpu_points[start]
        if t > t0:
            cpu.append((t, max(0.0, (c - c0) / (t - t0))))
    return {"memory": memory, "cpu": cpu}


def line_chart(points: list[tuple[float, float]], title: str, fmt: Callable[[float], str] = str,
               width: int = 560, height: int = 120) -> Markup:
    """An SVG polyline of ``points`` (x = seconds), its axes labelled with the extremes."""
    if len(points) < 2:
        return Markup(f'<p class="muted">{escape(title)}: not enough samples yet</p>')
    left, bottom, top, right = 64, 18, 8, 8
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y1 = max(ys) or 1.0
    w, h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / ((x1 - x0) or 1.0) * w

    def py(y: float) -> float:
        return top + h - y / y1 * h

    line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
    return Markup(
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f'<line x1="{left}" y1="{top + h}" x2="{width - right}" y2="{top + h}" class="axis"/>'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" class="axis"/>'
        f'<text x="{left - 4}" y="{top + 10}" text-anchor="end">{escape(fmt(y1))}</text>'
        f'<text x="{left - 4}" y="{top + h}" text-anchor="end">0</text>'
        f'<text x="{left}" y="{height - 4}">{x0:g} s</text>'
        f'<text x="{width - right}" y="{height - 4}" text-anchor="end">{x1:g} s</text>'
        f'<polyline points="{line}" class="series"/></svg></figure>')
