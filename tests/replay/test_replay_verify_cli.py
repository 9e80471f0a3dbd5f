"""``python -m xce.cli.scheduler_cmd --sim FILE ...`` in a fresh process: verify, start-ts, pause-at."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from xce.replay.format import iso_ns
from xce.replay.writer import record
from xce.testing.scenarios import closed_loop_events, random_events


def _cli(*args, hashseed="0", timeout=120):
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    return subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_10000_jobs_replay_with_zero_mismatches_in_a_fresh_process(tmp_path):
    path = tmp_path / "big.jsonl"
    recorded = record(closed_loop_events(2026, njobs=10_000, nhosts=64), path, seed=3, snapshot_interval=5000)
    assert sum(1 for d in recorded if d.OP == "DISPATCH") == 10_000
    proc = _cli("--sim", path, "--sim-verify", "--json", hashseed="12345", timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["verify"]["mismatches"] == 0
    assert summary["verify"]["produced"] == summary["verify"]["recorded"] == len(recorded)
    assert summary["decisions"]["DISPATCH"] == 10_000


def _dispatch_line(lines, jobid=None):
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj["type"] == "DECISION" and obj["payload"]["op"] == "DISPATCH" and (
                jobid is None or obj["payload"]["jobid"] == jobid):
            return i, obj
    raise AssertionError("no dispatch")


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "r.jsonl"
    record(random_events(8, njobs=80, nhosts=6), path, snapshot_interval=15)
    return path


def test_verify_passes_on_the_untouched_file(recording):
    proc = _cli("--sim", recording, "--sim-verify")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 mismatches" in proc.stdout and "verified " in proc.stdout


def test_edited_dispatch_host_fails_verify_and_names_time_and_job(recording):
    lines = recording.read_text().splitlines(keepends=True)
    i, obj = _dispatch_line(lines)
    jobid, ts = obj["payload"]["jobid"], obj["ts"]
    host = obj["payload"]["placement"][0][0]
    obj["payload"]["placement"][0][0] = "node999"
    lines[i] = json.dumps(obj) + "\n"
    recording.write_text("".join(lines))
    proc = _cli("--sim", recording, "--sim-verify")
    assert proc.returncode == 1
    assert f"DIFFERENT at ts={ts} ({iso_ns(ts)}): recorded DISPATCH job {jobid} on node999x" in proc.stdout
    assert f"produced DISPATCH job {jobid} on {host}x" in proc.stdout
    assert "verified" in proc.stdout and ": 1 mismatches" in proc.stdout


def test_edited_jobid_fails_verify(recording):
    lines = recording.read_text().splitlines(keepends=True)
    i, obj = _dispatch_line(lines)
    jobid, ts = obj["payload"]["jobid"], obj["ts"]
    obj["payload"]["jobid"] = 4242
    lines[i] = json.dumps(obj) + "\n"
    recording.write_text("".join(lines))
    proc = _cli("--sim", recording, "--sim-verify", "--json")
    assert proc.returncode == 1
    v = json.loads(proc.stdout)["verify"]
    assert v["mismatches"] == 1
    (m,) = v["details"]
    assert (m["kind"], m["ts"], m["time"]) == ("different", ts, iso_ns(ts))
    assert m["recorded"]["jobid"] == 4242 and m["produced"]["jobid"] == jobid


def test_deleted_recorded_decision_shows_as_extra(recording):
    lines = recording.read_text().splitlines(keepends=True)
    i, obj = _dispatch_line(lines)
    del lines[i]
    recording.write_text("".join(lines))
    proc = _cli("--sim", recording, "--sim-verify")
    assert proc.returncode == 1
    assert f"EXTRA at ts={obj['ts']}" in proc.stdout and f"produced DISPATCH job {obj['payload']['jobid']} " in proc.stdout


def test_start_ts_on_the_command_line(recording):
    snaps = [json.loads(x) for x in recording.read_text().splitlines() if '"SNAPSHOT"' in x[:20]]
    snap = snaps[2]
    full = json.loads(_cli("--sim", recording, "--json").stdout)
    for start in (str(snap["ts"]), iso_ns(snap["ts"])):
        proc = _cli("--sim", recording, "--sim-start-ts", start, "--sim-verify", "--json")
        assert proc.returncode == 0, proc.stderr
        part = json.loads(proc.stdout)
        assert part["snapshot_ts"] == snap["ts"]
        assert part["verify"]["mismatches"] == 0
        assert 0 < part["verify"]["produced"] < sum(full["decisions"].values())
        assert part["rounds"] < full["rounds"]


def test_pause_at_without_a_terminal_writes_state_and_snapshot(recording):
    lines = [json.loads(x) for x in recording.read_text().splitlines()]
    events = [x for x in lines if x["type"] not in ("HEADER", "SNAPSHOT", "DECISION")]
    pause = events[len(events) // 2]["ts"]
    proc = _cli("--sim", recording, "--sim-pause-at", pause, "--json")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"paused at ts={pause} ({iso_ns(pause)}); next event at ts=")
    assert "queues:\n  urgent" in out and "hosts: 6 (6 ok)" in out
    snap_file = f"{recording}.pause-{pause}.json"
    assert f"snapshot written to {snap_file}" in out
    data = json.loads(open(snap_file).read())
    summary = json.loads(out.splitlines()[-1])
    assert summary["paused_at"] == pause and summary["stopped"] is True
    assert summary["events"] == sum(1 for e in events if e["ts"] <= pause)
    assert data["clock"][0] == pause
    assert len(data["jobs"]) > 0
