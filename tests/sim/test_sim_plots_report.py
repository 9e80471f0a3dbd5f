"""Plots and the HTML report: what they show is computed right, and the page stands on its own."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from xce.sim import metrics, read_swf, simulate, uniform_cluster
from xce.sim.engine import SimResult
from xce.sim.swf import parse_lines

ROOT = Path(__file__).resolve().parents[2]
NASA = ROOT / "examples" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"


def _line(j, submit, run, procs, user=1):
    return f"{j} {submit} -1 {run} {procs} -1 -1 {procs} -1 -1 1 {user} 1 -1 0 -1 -1 -1"


@pytest.fixture(scope="module")
def busy_run() -> SimResult:
    """One host with 2 slots; a queue builds: 5 jobs of 1 slot x 100 s at t=0, then one at t=1000."""
    lines = [_line(j, 0, 100, 1) for j in range(1, 6)] + [_line(6, 1000, 50, 2, user=2)]
    return simulate(parse_lines(lines), uniform_cluster(1, 2))


@pytest.fixture(scope="module")
def nasa_run() -> SimResult:
    return simulate(read_swf(NASA, max_jobs=1500), uniform_cluster(128, 1))


def test_binned_queue_keeps_the_exact_peak(busy_run):
    # The queue is 3 pending right after t=0, 1 after t=100, 0 from t=200.
    b = metrics.binned(busy_run, "series_pending", width=500)
    assert b.high[0] == 3 and b.low[0] == 0
    assert b.high[2] == 0  # 1000..1050: nothing waits
    # Time-weighted mean over 0..500: 3 for 100 s, 1 for 100 s, 0 after: (300 + 100) / 500.
    assert b.mean[0] == pytest.approx(0.8)


def test_binned_utilization_is_an_exact_time_average(busy_run):
    # 2 slots busy 0..300 (jobs 1-5 in pairs: 0-100, 100-200, 200-300 with one), then 2 at 1000..1050.
    b = metrics.binned(busy_run, "series_busy", width=100, t_range=(0, 1100))
    assert b.mean[:3].tolist() == [2.0, 2.0, 1.0] and b.mean[10] == pytest.approx(1.0)
    assert metrics.utilization(busy_run) == pytest.approx((2 * 200 + 100 + 100) / (2 * 1050))


def test_bounded_slowdown_by_class(busy_run):
    m = metrics.job_metrics(busy_run)
    assert m.wait.tolist() == [0, 0, 100, 100, 200, 0]
    assert m.bsld.tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 1.0]
    by_size = metrics.bsld_by_size(m)
    assert by_size.labels == ["1", "2"] and by_size.counts == [5, 1]
    assert by_size.mean[0] == pytest.approx(9 / 5)
    by_run = metrics.bsld_by_runtime(m)
    assert by_run.counts[:2] == [1, 5] and metrics.runtime_class(100) == 1 and by_run.labels[1] == "1-10 min"
    assert metrics.bounded_slowdown(0, 1) == 1.0 and metrics.bounded_slowdown(90, 5) == 9.5


def test_bin_width_is_readable():
    assert metrics.bin_width(92 * 86400) == (6 * 3600, "6 h")
    assert metrics.bin_width(3600) == (60, "1 min")


def test_resource_ids_never_overlap_on_multi_slot_hosts():
    from xce.sim.resources import interval_text, resource_intervals

    lines = [_line(j, j, 30 + 7 * j, 1 + j % 3) for j in range(1, 40)]
    r = simulate(parse_lines(lines), uniform_cluster(3, 4))
    ids_of = resource_intervals(r)
    spans = []
    for i in range(len(r.start)):
        ids = {x for a, b in ids_of(i) for x in range(a, b + 1)}
        assert len(ids) == r.trace.procs[i] and all(0 <= x < 12 for x in ids)
        # Slots on the hosts the core chose: host h owns ids 4h..4h+3.
        assert {x // 4 for x in ids} == {h for h, _ in r.placement.hosts(i)}
        spans.append((r.start[i], r.end[i], ids))
    for k, (s1, e1, a) in enumerate(spans):
        for s2, e2, b in spans[k + 1:]:
            if s1 < e2 and s2 < e1:
                assert not a & b
    assert interval_text([(0, 3), (5, 5), (7, 9)]) == "0-3 5 7-9"


def test_placements_are_packed_runs():
    from xce.sim.placement import Placements

    names = [f"h{i:04d}" for i in range(9216)]
    p = Placements(names, 2)
    wide = tuple((n, 1) for n in names)
    p.set(0, wide)
    p.set(1, (("h0003", 2), ("h0004", 2), ("h0009", 1)))
    assert p.runs(0) == [(0, 9216, 1)] and p[0] == wide
    assert p.runs(1) == [(3, 2, 2), (9, 1, 1)] and p.text(1) == "h0003:2 h0004:2 h0009:1"
    assert p.nbytes() == 12 + 24  # a job on 9,216 hosts keeps 12 bytes, not 9,216 tuples


def test_every_run_plot_in_both_formats(tmp_path, nasa_run):
    from xce.sim.plots import write_plots

    files = write_plots(nasa_run, tmp_path, gantt_window=(0, 6 * 3600))
    names = sorted(p.name for p in files)
    stems = ["bsld_by_runtime", "bsld_by_size", "gantt", "queue", "utilization", "wait_cdf"]
    assert names == sorted(f"{s}.{e}" for s in stems for e in ("png", "svg"))
    for p in files:
        data = p.read_bytes()
        assert len(data) > 5000
        assert data.startswith(b"\x89PNG") if p.suffix == ".png" else b"<svg" in data[:2000]


def test_gantt_default_window_surrounds_the_longest_queue(busy_run):
    from xce.sim.plots import default_gantt_window

    a, b = default_gantt_window(busy_run)
    assert (a, b) == (0, 1050)  # the run is shorter than a day: all of it


def test_comparison_plots(tmp_path, nasa_run):
    from xce.sim.plots import write_comparison_plots
    from xce.sim.report import summary

    other = simulate(read_swf(NASA, max_jobs=1500), uniform_cluster(64, 1))
    runs = [("128 hosts", nasa_run), ("64 hosts", other)]
    files = write_comparison_plots(runs, [summary(r) for _, r in runs], tmp_path, formats=("png",))
    assert sorted(p.stem for p in files) == sorted(["compare_metrics", "compare_wait_cdf", "compare_bsld_by_size",
                                                    "compare_bsld_by_runtime", "compare_utilization",
                                                    "compare_queue"])


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _self_contained(page: str) -> list[bytes]:
    parser = _Page()
    parser.feed(page)
    tags = {t for t, _ in parser.tags}
    assert not tags & {"script", "link", "iframe", "object", "embed"}
    for _, attrs in parser.tags:
        for key in ("src", "href"):
            if key in attrs:
                assert attrs[key].startswith("data:"), attrs[key][:80]
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", page), "no CSS fetches"
    images = []
    for tag, attrs in parser.tags:
        if tag == "img":
            head, _, data = attrs["src"].partition(",")
            assert head == "data:image/svg+xml;base64"
            images.append(base64.b64decode(data))
    return images


def test_html_report_of_a_run_is_self_contained(tmp_path, nasa_run):
    from xce.sim.html_report import write_run_report
    from xce.sim.report import summary

    path = write_run_report(tmp_path / "r.html", nasa_run, summary(nasa_run))
    page = path.read_text()
    images = _self_contained(page)
    assert len(images) == 6
    for svg in images:
        assert b"<svg" in svg and b'id="axes_1"' in svg  # a drawn figure, not an empty one
    assert "<th>mean bounded slowdown</th>" in page and "<td>builtin_fcfs</td>" in page
    assert "NASA-iPSC-1993-3.1-cln.swf on 128 hosts x 1 slot(s), picker builtin_fcfs" in page


def test_html_report_of_a_comparison(tmp_path, nasa_run, busy_run):
    from xce.sim.html_report import write_compare_report
    from xce.sim.report import summary

    runs = [("a", nasa_run), ("b", nasa_run)]
    page = write_compare_report(tmp_path / "c.html", runs, [summary(r) for _, r in runs]).read_text()
    assert len(_self_contained(page)) == 6
    assert page.count("<tr><td>a</td>") == 1 and page.count("<tr><td>b</td>") == 1


def test_cli_report(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(NASA), "--max-jobs", "800",
                          "--report", str(tmp_path / "nasa.html")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert f"Wrote {tmp_path / 'nasa.html'}" in out.stdout
    assert len(_self_contained((tmp_path / "nasa.html").read_text())) == 6


def test_metrics_of_an_empty_series():
    r = simulate(parse_lines([_line(1, 0, 0, 1)]), uniform_cluster(1, 1))
    b = metrics.binned(r, "series_busy")
    assert np.all(b.mean == 0) and metrics.utilization(r) == 0.0
