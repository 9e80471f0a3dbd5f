"""A recording made while real jobs run replays through the core with the same decisions."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _xceadmin(cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from xce.cli.admin import main; main()", *args],
                          env=cluster.env(), capture_output=True, text=True, timeout=60, check=True)


def test_recording_replays_without_mismatches(make_cluster, tmp_path):
    cluster, xce = make_cluster(workers=2, slots=1)
    recording = cluster.state_dir / "recordings" / "live.jsonl"  # recordings stay in the record directory
    _xceadmin(cluster, "scheduler", "record", "start", "live.jsonl")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not recording.exists():
        time.sleep(0.1)
    assert recording.exists(), "the scheduler did not start recording"
    ids = [xce.submit("--", "sh", "-c", f"sleep 0.{i}") for i in range(1, 5)]
    ids.append(xce.submit("-n", "2", "--", "true"))
    for jobid in ids:
        xce.wait_state(jobid, "DONE", 30)
    _xceadmin(cluster, "scheduler", "record", "stop")
    wait_for(lambda: "recording stopped" in (cluster.log_dir / "scheduler.log").read_text(), 10,
             "the scheduler to close the recording")
    r = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(recording), "--sim-verify"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"replay reported mismatches:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "DISPATCH" in recording.read_text()


def test_a_recording_survives_a_scheduler_killed_while_recording(make_cluster):
    """A recording is written as it goes (each round's lines at the round's end, before its decisions
    are posted): a scheduler SIGKILLed while recording leaves every decision the controller applied
    in the file, which replays and verifies up to the cut. It once stayed 0 bytes until ``record stop``."""
    cluster, xce = make_cluster(workers=1, slots=2)
    recording = cluster.state_dir / "recordings" / "cut.jsonl"
    _xceadmin(cluster, "scheduler", "record", "start", "cut.jsonl")
    wait_for(lambda: recording.exists() and recording.stat().st_size > 0, 10, "the recording's first lines")
    ids = [xce.submit("--", "true") for _ in range(3)]
    for jobid in ids:
        xce.wait_state(jobid, "DONE", 30)
    cluster.kill("scheduler", signal.SIGKILL)
    text = recording.read_text()
    assert text.endswith("\n"), "the recording ends in the middle of a line"
    dispatched = {json.loads(line)["payload"]["jobid"] for line in text.splitlines()
                  if '"DECISION"' in line and '"DISPATCH"' in line}
    assert set(ids) <= dispatched, (ids, dispatched)
    r = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(recording), "--sim-verify"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"replay reported mismatches:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
