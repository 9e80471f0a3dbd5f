"""``xce acct`` after a mixed workload on a real cluster: every finished job's wait and run time agree
with its own history to the second, exit statuses, CPU time and memory peak are what the jobs did,
and the totals, the CSV and the table say the same."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MB = 1024 * 1024
BUSY = "import time\nwhile time.process_time() < 1.5: pass"
HOLD = "import time; b = bytearray(120 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(2.5)"


def test_acct_matches_the_jobs_own_histories(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=2)
    busy = xce.submit("-n", "2", "--", sys.executable, "-c", BUSY)      # both slots, CPU-bound
    failing = xce.submit("-q", "normal", "--", "sh", "-c", "sleep 1; exit 3")  # waits for the slots, fails
    memory = xce.submit("--", sys.executable, "-c", HOLD)               # waits, then holds 120 MB
    held = xce.submit("--priority", "-100", "--", "true")  # last in line behind the others: killed pending
    xce("kill", str(held))
    for j in (busy, failing, memory):
        xce.wait_state(j, ("DONE", "EXIT"), 60)
    xce.wait_state(held, "EXIT", 20)
    jobs = (busy, failing, memory, held)

    rep = json.loads(xce("acct", "--json").stdout)
    by_id = {j["jobid"]: j for j in rep["jobs"]}
    assert sorted(by_id) == sorted(jobs)
    for jobid in jobs:
        own = xce.job(jobid)
        when = {h["to"]: h["ts"] for h in own["history"]}
        end = when.get("DONE") or when["EXIT"]
        start = when.get("RUN")
        row = by_id[jobid]
        assert abs(row["wait_s"] - ((start or end) - when["PEND"]) / 1e9) < 1.0, (row, own["history"])
        assert abs(row["run_s"] - ((end - start) / 1e9 if start else 0.0)) < 1.0, (row, own["history"])
        assert (row["state"], row["exit_code"], row["tasks"]) == (own["state"], own["exit_code"], own["tasks"])
    assert by_id[failing]["wait_s"] >= 1.0  # it waited for the busy job's two slots
    assert (by_id[failing]["state"], by_id[failing]["exit_code"]) == ("EXIT", 3)
    assert by_id[busy]["cpu_s"] >= 1 and by_id[busy]["state"] == "DONE"
    assert 100 * MB <= by_id[memory]["mem_peak"] < 400 * MB
    assert (by_id[held]["run_s"], by_id[held]["start_time"]) == (0, None)

    t = rep["totals"]
    assert (t["jobs"], t["done"], t["exit"]) == (4, 2, 2)
    assert t["slot_hours"] == pytest.approx(sum(j["run_s"] * j["tasks"] for j in rep["jobs"]) / 3600, abs=1e-4)
    assert t["mean_wait_s"] == pytest.approx(sum(j["wait_s"] for j in rep["jobs"]) / 4, abs=1e-3)

    # the CSV carries the same figures, one job a line
    rows = list(csv.DictReader(io.StringIO(xce("acct", "--csv").stdout)))
    assert [int(r["jobid"]) for r in rows] == [j["jobid"] for j in rep["jobs"]]
    for r in rows:
        j = by_id[int(r["jobid"])]
        assert (float(r["wait_s"]), float(r["run_s"]), r["state"]) == (j["wait_s"], j["run_s"], j["state"])

    # the table names every job and ends with the totals
    out = xce("acct", "-S", "1h", "-q", "normal").stdout
    assert all(str(j) in out for j in jobs)
    assert "Jobs: 4 (DONE 2, EXIT 2)" in out and "slot-hours:" in out and "mean wait:" in out

    # filters and the window
    assert json.loads(xce("acct", "--json", "-S", "2000-01-01", "-E", "2000-01-02").stdout)["jobs"] == []
    bad = xce("acct", "-S", "yesterday-ish", check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("xce: -S/-E: expected a duration ago")
    assert json.loads(xce("acct", "--json", "-u", "nobody").stdout)["jobs"] == []
