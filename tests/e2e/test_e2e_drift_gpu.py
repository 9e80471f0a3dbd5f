"""GPU drift on a live cluster (issue 24): a job declaring ``xce.io/gpu=2`` whose devices are barely
busy is reported by ``xce drift`` far below its declaration.

The machine running the tests has no GPU, so the worker imports a stand-in ``pynvml``
(:mod:`xce.testing.fakegpu`, on its ``PYTHONPATH``) that answers with three devices and a fixed utilisation per device read from a JSON
file; the worker's provider, its hand-out of devices, its usage ticks, the controller's records and
the CLI are real. ``bench/gpu_check.py`` does the same against a real GPU."""

from __future__ import annotations

import json

import pytest

from xce.testing import fakegpu

pytestmark = [pytest.mark.integration, pytest.mark.slow]



def test_a_job_leaving_its_gpus_idle_is_far_below_in_drift(make_cluster, tmp_path, monkeypatch):
    for key, value in fakegpu.environment(tmp_path / "fake-nvml", 3, util=[10, 5, 100]).items():
        monkeypatch.setenv(key, value)
    cluster, xce = make_cluster(workers=1, slots=2, report_interval=0.5)

    (host,) = json.loads(xce("hosts", "--json").stdout)["hosts"]
    assert host["resources"]["xce.io/gpu"] == 3, host  # the worker counted the stand-in's devices
    jobid = xce.submit("--type", "train", "--request", "xce.io/gpu=2", "--", "sleep", "3")
    job = xce.wait_state(jobid, ("DONE", "EXIT"), timeout=60)
    assert job["state"] == "DONE", job
    # Its devices are 0 and 1 (10% and 5% busy), never device 2: 150 thousandths of a GPU in every tick.
    usage = job["usage"]
    assert usage["count"]["gpu_util_milli"] >= 2, usage
    assert usage["peak"]["gpu_util_milli"] == 150 and usage["mean"]["gpu_util_milli"] == 150, usage

    rep = json.loads(xce("drift", "--json", "--min-samples", "1").stdout)
    rows = {(r["job_type"], r["resource"]): r for r in rep["rows"]}
    gpu = rows[("train", "xce.io/gpu")]
    assert (gpu["declared"], gpu["measured_median"], gpu["ratio"], gpu["verdict"]) == (2, 0, 0.0, "far-below"), gpu
    assert rep["unmeasured"] == [], rep
    text = xce("drift", "--min-samples", "1").stdout
    assert "xce.io/gpu" in text and "2 of 2 (100%) wasted" in text, text
