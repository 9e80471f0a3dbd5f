"""CPU drift on a live cluster (issue 24): a job declaring ``xce.io/cpu-milli=500`` that keeps two
processes busy for 20 s is reported by ``xce drift`` against its CPU time over its run time, in
milli-CPUs, with the ratio to its declaration; a declared resource no worker measures is listed
as such rather than passed over."""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BURN = ("import os, time\n"
        "os.fork()\n"  # two processes, each keeping a CPU busy
        "end = time.time() + 20\n"
        "while time.time() < end:\n"
        "    pass\n")


def test_a_job_burning_two_cpus_shows_in_drift_with_its_ratio(make_cluster, tmp_path):
    config = tmp_path / "xce.toml"
    config.write_text('[shared_resources."example.com/cfd-license"]\ntotal = 4\n')
    cluster, xce = make_cluster(workers=1, slots=2, report_interval=0.5, config=config)
    burn = xce.submit("--type", "burn", "--request", "xce.io/cpu-milli=500", "--", sys.executable, "-c", BURN)
    blind = xce.submit("--type", "blind", "--request", "example.com/cfd-license=1", "--", "true")
    job = xce.wait_state(burn, ("DONE", "EXIT"), timeout=120)
    assert job["state"] == "DONE", job
    xce.wait_state(blind, ("DONE", "EXIT"), timeout=60)

    rep = json.loads(xce("drift", "--json", "--min-samples", "1").stdout)
    rows = {(r["job_type"], r["resource"]): r for r in rep["rows"]}
    cpu = rows[("burn", "xce.io/cpu-milli")]
    assert cpu["declared"] == 500 and cpu["runs"] == 1, cpu
    # The figure is the job's own CPU time over its run time up to the tick that measured it.
    usage = job["usage"]
    seconds = (min(usage["ts"], job["end_time"]) - job["start_time"]) / 1e9
    expected = round(usage["peak"]["cpu_ms"] / seconds)
    assert cpu["measured_median"] == expected > 0, (cpu, usage, seconds)
    assert cpu["ratio"] == round(expected / 500, 3)
    verdict = "far-above" if cpu["ratio"] > 1.5 else "far-below" if cpu["ratio"] < 0.5 else "ok"
    assert cpu["verdict"] == verdict, cpu
    text = xce("drift", "--min-samples", "1").stdout
    assert "xce.io/cpu-milli" in text and f"{cpu['ratio']:.2f}" in text, text
    # A license is declared, never measured per job: listed, not judged.
    assert [(u["job_type"], u["resource"], u["runs"]) for u in rep["unmeasured"]] == [
        ("blind", "example.com/cfd-license", 1)], rep
    assert "blind example.com/cfd-license: declared by 1 run(s), never measured" in text, text
    print(f"e2e cpu drift: {cpu['measured_median']} milli-CPU against 500 declared, ratio {cpu['ratio']}")
