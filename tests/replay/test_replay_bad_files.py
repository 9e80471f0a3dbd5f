"""Every broken file names the file, the line and the problem; a config hash mismatch only warns."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from xce.replay.reader import ReplayFileError, ReplayReader
from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import random_events


@pytest.fixture
def lines(tmp_path):
    path = tmp_path / "good.jsonl"
    record(random_events(11, njobs=30), path, snapshot_interval=10)
    return path.read_text().splitlines(keepends=True)


def _write(tmp_path, lines, name="bad.jsonl"):
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def _error(path) -> ReplayFileError:
    with pytest.raises(ReplayFileError) as info:
        for _ in ReplayReader(path):
            pass
    return info.value


def _event_line(lines, start=2):
    return next(i for i, x in enumerate(lines) if i >= start and json.loads(x)["type"] not in ("SNAPSHOT", "DECISION"))


def test_truncated_last_line(tmp_path, lines):
    last = lines[-1]
    path = _write(tmp_path, lines[:-1] + [last[: len(last) // 2]])
    err = _error(path)
    assert (err.path, err.lineno) == (str(path), len(lines))
    assert str(err).startswith(f"{path}:{len(lines)}: truncated line")


def test_corrupt_json_in_the_middle(tmp_path, lines):
    i = len(lines) // 2
    lines[i] = lines[i].replace('"ts"', '"ts" oops', 1)
    path = _write(tmp_path, lines)
    err = _error(path)
    assert err.lineno == i + 1
    assert str(err).startswith(f"{path}:{i + 1}: corrupt JSON: Expecting ':' delimiter at column")


def test_unknown_event_type_lists_the_known_ones(tmp_path, lines):
    i = _event_line(lines, 5)
    lines[i] = json.dumps({"type": "JOB_TELEPORT", "ts": json.loads(lines[i])["ts"], "payload": {}}) + "\n"
    err = _error(_write(tmp_path, lines))
    assert err.lineno == i + 1
    assert "unknown line type 'JOB_TELEPORT'" in err.problem
    assert "HEADER, SNAPSHOT, DECISION, CONFIG_PUSH, JOBS_PUSH" in err.problem and "BEGIN_ROUND" in err.problem


def test_version_2_is_refused(tmp_path, lines):
    head = json.loads(lines[0])
    head["version"] = "2.0.0"
    lines[0] = json.dumps(head) + "\n"
    err = _error(_write(tmp_path, lines))
    assert err.lineno == 1
    assert "replay file version 2.0.0 is not supported (this reader handles 1.x.y" in err.problem


def test_minor_version_is_accepted(tmp_path, lines):
    head = json.loads(lines[0])
    head["version"] = "1.7.3"
    lines[0] = json.dumps(head) + "\n"
    assert sum(1 for _ in ReplayReader(_write(tmp_path, lines))) == len(lines) - 1


def test_missing_header(tmp_path, lines):
    err = _error(_write(tmp_path, lines[1:]))
    assert err.lineno == 1
    assert err.problem == "missing HEADER: the first line must be a HEADER line (it is 'SNAPSHOT')"


def test_snapshot_without_data(tmp_path, lines):
    snap = json.loads(lines[1])
    del snap["data"]
    lines[1] = json.dumps(snap) + "\n"
    err = _error(_write(tmp_path, lines))
    assert (err.lineno, err.problem) == (2, "SNAPSHOT without data: 'data' must be the core state object")


def test_ts_going_backwards(tmp_path, lines):
    i = _event_line(lines, len(lines) // 2)
    obj = json.loads(lines[i])
    obj["ts"] = 5
    lines[i] = json.dumps(obj) + "\n"
    err = _error(_write(tmp_path, lines))
    assert err.lineno == i + 1
    assert f"{obj['type']}: ts 5 (1970-01-01T00:00:00.000000005Z) goes backwards" in err.problem


def test_cli_prints_the_error_and_exits_2(tmp_path, lines):
    path = _write(tmp_path, lines[1:])
    proc = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"{path}:1: missing HEADER" in proc.stderr


def test_config_hash_mismatch_warns_and_replays(tmp_path, lines):
    head = json.loads(lines[0])
    head["config_hash"] = "0" * 64
    lines[0] = json.dumps(head) + "\n"
    path = _write(tmp_path, lines)
    d = SimDriver(path, verify=True, out=io.StringIO(), err=io.StringIO())
    summary = d.run()
    assert len(d.warnings) == 1 and d.warnings[0].startswith(f"{path}:2: warning: SNAPSHOT configuration hash")
    assert summary["events"] > 0 and summary["verify"]["mismatches"] == 0
    proc = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(path), "--sim-verify"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "warning: SNAPSHOT configuration hash" in proc.stderr
    assert "0 mismatches" in proc.stdout


def test_later_snapshots_follow_config_push_without_warning(tmp_path, lines):
    path = _write(tmp_path, lines, "good.jsonl")
    reader = ReplayReader(path)
    assert sum(1 for r in reader if r.kind == "SNAPSHOT") >= 3
    assert reader.warnings == []


def test_bad_event_payload_names_the_field(tmp_path, lines):
    i = next(i for i, x in enumerate(lines) if json.loads(x)["type"] == "JOBS_PUSH")
    obj = json.loads(lines[i])
    del obj["payload"]["jobs"]
    lines[i] = json.dumps(obj) + "\n"
    err = _error(_write(tmp_path, lines))
    assert (err.lineno, err.problem) == (i + 1, "JOBS_PUSH: bad payload: 'jobs'")


def test_events_before_any_snapshot_cannot_be_replayed(tmp_path, lines):
    path = _write(tmp_path, [lines[0]] + [x for x in lines[1:] if json.loads(x)["type"] != "SNAPSHOT"])
    with pytest.raises(ReplayFileError) as info:
        SimDriver(path, out=io.StringIO(), err=io.StringIO()).run()
    assert info.value.lineno == 2
    assert "before the first SNAPSHOT: there is no state to start the replay from" in info.value.problem
