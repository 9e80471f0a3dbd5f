"""The simulator's HTML report (``xce sim run --report``) of a NASA-iPSC run, opened in a real
headless Chromium from the file alone: its plots show, and it asks nothing of any server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from xce.testing.browser import Browser

pytestmark = pytest.mark.integration

NASA = Path(__file__).resolve().parents[2] / "examples" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"


def test_the_nasa_report_opens_in_the_browser_with_its_plots_visible(tmp_path):
    report = tmp_path / "nasa.html"
    run = subprocess.run([sys.executable, "-m", "xce.cli.main", "sim", "run", "--workload", str(NASA),
                          "--max-jobs", "800", "--report", str(report)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    b = Browser(f"file://{tmp_path}")
    try:
        b.get("/nasa.html")
        assert b.text("h1").startswith("Simulation of NASA-iPSC-1993-3.1-cln.swf")
        assert "mean bounded slowdown" in b.text("body")
        images = b.wait(lambda: (imgs := b.driver.execute_script(
            "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth,"
            " i.getBoundingClientRect().width, i.getBoundingClientRect().height]);"))
            and all(i[1] and i[2] > 0 for i in imgs) and imgs, 30, "every plot to be decoded")
        assert len(images) == 6
        for alt, _, _natural, width, height in images:
            assert width > 200 and height > 100, (alt, width, height)  # drawn on the page, not a broken icon
        assert {i[0] for i in images} >= {"Utilization over time", "Wait-time CDF", "Gantt chart"}
        b.screenshot(tmp_path / "report.png", full_page=True)
        assert f"file://{report}" in b.requested
        assert b.external_requests() == [] and not [u for u in b.requested if u.startswith(("http:", "https:"))]
    finally:
        b.close()
