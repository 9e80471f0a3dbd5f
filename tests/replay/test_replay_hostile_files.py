"""`xce scheduler --sim` on files that are not replay files, or are broken in ways a person would not think of:
a one-line error with the line, exit status 2, never a traceback. Plus fuzz over the reader and the driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from xce.replay.reader import ReplayFileError, ReplayReader
from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import random_events

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> list[str]:
    path = tmp_path_factory.mktemp("rec") / "good.jsonl"
    record(random_events(5, njobs=12), path, snapshot_interval=10)
    return path.read_text().splitlines(keepends=True)


def replay(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(path), "--sim-verify"],
                          capture_output=True, text=True, cwd=ROOT)


def one_line(proc: subprocess.CompletedProcess, *expected: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    err = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(err) == 1, proc.stderr
    for text in expected:
        assert text in err[0], err[0]
    return err[0]


def test_random_bytes(tmp_path):
    path = tmp_path / "random.bin"
    path.write_bytes(b"\x91" + os.urandom(4000))
    one_line(replay(path), f"{path}:1:", "not UTF-8 text")


def test_invalid_utf8_after_good_lines(tmp_path, good):
    path = tmp_path / "bad.jsonl"
    path.write_bytes("".join(good[:4]).encode() + b'{"type":"BEGIN_ROUND","ts":1\xff}\n' + "".join(good[4:]).encode())
    one_line(replay(path), f"{path}:5:", "not UTF-8 text (byte 29 of the line)")


def test_nesting_100000_deep(tmp_path, good):
    path = tmp_path / "deep.jsonl"
    path.write_text(good[0] + "[" * 100_000 + "\n")
    one_line(replay(path), f"{path}:2:", "nested too deep")


@pytest.mark.parametrize("ts,expected", [
    ("1e400", "bad number: 1e400 is out of range"),
    ("NaN", "bad number: NaN is not a JSON number"),
    ("9" * 5000, "bad number: a number with thousands of digits"),
    ("99999999999999999999999999", "'ts' 99999999999999999999999999 is out of range"),
    ("-5", "'ts' must be a non-negative integer"),
])
def test_numbers_out_of_range(tmp_path, good, ts, expected):
    path = tmp_path / "num.jsonl"
    path.write_text("".join(good) + f'{{"type":"BEGIN_ROUND","ts":{ts}}}\n')
    one_line(replay(path), f"{path}:{len(good) + 1}:", expected)


def test_truncated_last_line(tmp_path, good):
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(good)[:-25])
    one_line(replay(path), f"{path}:{len(good)}:", "truncated line")


def test_snapshot_with_garbage_data(tmp_path, good):
    snap = next(i for i, x in enumerate(good) if json.loads(x)["type"] == "SNAPSHOT")
    broken = json.loads(good[snap])
    broken["data"]["hosts"] = 7
    lines = good[:snap] + [json.dumps(broken) + "\n"] + good[snap + 1:]
    path = tmp_path / "snap.jsonl"
    path.write_text("".join(lines))
    one_line(replay(path), f"{path}:{snap + 1}:", "SNAPSHOT cannot be loaded", "malformed snapshot")
    del broken["data"]["config"]
    path.write_text("".join(good[:snap] + [json.dumps(broken) + "\n"] + good[snap + 1:]))
    one_line(replay(path), f"{path}:{snap + 1}:", "missing key 'config'")


def test_an_event_the_core_cannot_take(tmp_path, good):
    """Well-formed JSON, a known event, values the core refuses: the line, not a traceback."""
    push = {"type": "JOBS_PUSH", "ts": 10**18, "payload": {"jobs": [{
        "jobid": 999999, "user": "u", "queue": "normal", "project": "default", "job_type": "", "priority": 0,
        "queue_time": 0, "request": "", "tasks": 10**30, "state": "PEND", "placement": [], "start_time": None}]}}
    path = tmp_path / "core.jsonl"
    path.write_text("".join(good) + json.dumps(push) + "\n" + '{"type":"BEGIN_ROUND","ts":1000000000000000001}\n')
    proc = replay(path)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (1, 2)  # refused with its line (2), or taken and replayed with mismatches (1)
    if proc.returncode == 2:
        one_line(proc, f"{path}:")


# -- fuzz ---------------------------------------------------------------------------------------

_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
                     max_leaves=12)
_TYPES = st.sampled_from(["HEADER", "SNAPSHOT", "DECISION", "JOBS_PUSH", "BEGIN_ROUND", "JOB_STATE_CHANGE",
                          "WORKERS_PUSH", "CONFIG_PUSH", "JOB_RUSAGE", "NOPE"])
_LINE = st.one_of(
    st.builds(lambda t, ts, p: json.dumps({"type": t, "ts": ts, "payload": p, "data": p}), _TYPES,
              st.integers(min_value=-2, max_value=2**64), _JSON),
    _JSON.map(json.dumps),
    st.text(max_size=40),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_reader_and_driver(tmp_path, good, data):
    """Mutate a good recording (replace, insert, drop lines): the driver replays it or raises
    ReplayFileError naming the file and a line; nothing else escapes."""
    lines = list(good)
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(lines)))
        action = data.draw(st.sampled_from(["insert", "replace", "drop"]))
        if action == "insert" or k == len(lines):
            lines.insert(k, data.draw(_LINE) + "\n")
        elif action == "replace":
            lines[k] = data.draw(_LINE) + "\n"
        else:
            del lines[k]
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(lines))
    try:
        for _ in ReplayReader(path):
            pass
        SimDriver(path, verify=True, out=open(os.devnull, "w"), err=open(os.devnull, "w"), interactive=False).run()
    except ReplayFileError as exc:
        assert str(exc).startswith(f"{path}:") and exc.lineno >= 1 and "\n" not in str(exc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2000))
def test_fuzz_bytes(tmp_path, data):
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(data)
    try:
        for _ in ReplayReader(path):
            pass
    except ReplayFileError as exc:
        assert "\n" not in str(exc)
