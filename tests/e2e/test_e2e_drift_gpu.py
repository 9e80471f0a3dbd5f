"""GPU drift on a live cluster (issue 24): a job declaring ``xce.io/gpu=2`` whose devices are barely
busy is reported by ``xce drift`` far below its declaration.

The machine running the tests has no GPU, so the worker imports a stand-in ``pynvml`` (a file on its
``PYTHONPATH``) that answers with two devices and a fixed utilisation per device read from a JSON
file; the worker's provider, its hand-out of devices, its usage ticks, the controller's records and
the CLI are real. ``bench/gpu_check.py`` does the same against a real GPU."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FAKE_PYNVML = '''\
"""A stand-in for nvidia-ml-py: devices and their utilisation (percent) from the JSON in $XCE_FAKE_NVML."""
import json
import os
import types


class NVMLError(Exception):
    pass


def _util():
    with open(os.environ["XCE_FAKE_NVML"]) as f:
        return json.load(f)["util"]


def nvmlInit():
    if not os.environ.get("XCE_FAKE_NVML"):
        raise NVMLError("Driver Not Loaded")


def nvmlShutdown():
    pass


def nvmlDeviceGetCount():
    return len(_util())


def nvmlDeviceGetHandleByIndex(index):
    if not 0 <= index < len(_util()):
        raise NVMLError("Invalid Argument")
    return index


def nvmlDeviceGetUtilizationRates(handle):
    return types.SimpleNamespace(gpu=_util()[handle], memory=0)
'''


def test_a_job_leaving_its_gpus_idle_is_far_below_in_drift(make_cluster, tmp_path, monkeypatch):
    fake = tmp_path / "fake-nvml"
    fake.mkdir()
    (fake / "pynvml.py").write_text(FAKE_PYNVML)
    (fake / "devices.json").write_text(json.dumps({"util": [10, 5, 100]}))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(fake), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("XCE_FAKE_NVML", str(fake / "devices.json"))
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
