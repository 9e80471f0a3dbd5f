"""The drift report on a live cluster: real jobs, real usage ticks, real accounting records.

Twenty runs of ``etl`` declare 500 MB and hold about 50 MB; twenty runs of ``leaky`` declare
nothing and hold about 100 MB. ``xce drift`` must call the first "far below" (with the waste per
placement) and the second "never declared", and say nothing about the cumulative ``cpu_ms``.
Workers sample usage every 0.25 s and each job holds its memory for 2 s, so every run is
measured while it holds the memory.
"""

from __future__ import annotations

import json
import sys
import time

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MB = 1024 * 1024


def _hold(mb: int) -> str:
    return (f"b = bytearray({mb} * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); "
            "import time; time.sleep(2)")


def test_drift_far_below_and_never_declared(make_cluster):
    t0 = time.monotonic()
    cluster, xce = make_cluster(workers=2, slots=20, report_interval=0.25)
    xce("submit", "--array", "20", "--type", "etl", "--request", "mem=500M", "--", sys.executable, "-c", _hold(50))
    xce("submit", "--array", "20", "--type", "leaky", "--", sys.executable, "-c", _hold(100))

    def finished():
        jobs = xce.jobs()
        return len(jobs) == 40 and all(j["state"] in ("DONE", "EXIT") for j in jobs) and jobs
    jobs = wait_for(finished, 60, "40 jobs to finish", interval=0.5)
    assert all(j["state"] == "DONE" for j in jobs), [(j["jobid"], j["state"]) for j in jobs]

    rep = json.loads(xce("drift", "--json").stdout)
    # A run that happens to burn a whole second of CPU adds an undeclared xce.io/cpu-milli row.
    rep["rows"] = [r for r in rep["rows"] if r["resource"] != "xce.io/cpu-milli"]
    rows = {(r["job_type"], r["resource"]): r for r in rep["rows"]}
    assert set(rows) == {("etl", "mem"), ("leaky", "mem")}, rep
    assert rep["insufficient"] == []
    etl, leaky = rows[("etl", "mem")], rows[("leaky", "mem")]
    assert etl["verdict"] == "far-below" and etl["runs"] == 20 and etl["declared"] == 500 * MB
    assert 45 * MB <= etl["measured_median"] <= 120 * MB, etl  # 50 MB plus the interpreter
    assert etl["wasted_per_placement"] == etl["declared"] - etl["measured_median"]
    assert leaky["verdict"] == "never-declared" and leaky["runs"] == 20 and leaky["declared"] == 0
    assert 95 * MB <= leaky["measured_median"] <= 170 * MB, leaky
    assert [r["verdict"] for r in rep["rows"]] == ["never-declared", "far-below"]  # worst first

    text = xce("drift").stdout
    assert "measured far below declared" in text and "never declared" in text and "500M" in text, text
    few = xce("drift", "--type", "etl", "--min-samples", "21").stdout
    assert "etl mem: 20 run(s), 21 needed before drift is reported" in few, few
    print(f"e2e drift: {time.monotonic() - t0:.1f} s including cluster start")
