"""The writer: file layout, snapshot cut points, and that recording never changes a decision."""

from __future__ import annotations

import json

import pytest

from xce.core import SchedulerCore
from xce.core.specs import SchedConfig
from xce.replay import format as fmt
from xce.replay.writer import record
from xce.testing.scenarios import random_events


def _plain(events, seed=0):
    out = []
    core = SchedulerCore(out.append, seed=seed)
    for e in events:
        core.clock.freeze_at(e.ts)
        core.push_event(e)
    return [(d.ts, d.to_json()) for d in out], core.snapshot()


@pytest.mark.parametrize("seed", [1, 7, 42])
def test_recording_never_changes_a_decision(tmp_path, seed):
    events = random_events(seed, njobs=120)
    plain, _ = _plain(events, seed)
    recorded = record(events, tmp_path / "r.jsonl", seed=seed, snapshot_interval=9)
    assert [(d.ts, d.to_json()) for d in recorded] == plain
    # ... and the DECISION lines are exactly those decisions, in order
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(x["ts"], x["payload"]) for x in lines if x["type"] == "DECISION"] == plain


def test_layout_header_snapshots_events(tmp_path):
    events = random_events(3, njobs=60)
    record(events, tmp_path / "r.jsonl", snapshot_interval=10)
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    head = lines[0]
    assert head["type"] == "HEADER" and head["version"] == "1.0.0"
    assert head["start_ts"] == events[0].ts - 1
    assert head["start_wall"].endswith("Z") and len(head["start_wall"]) == 20
    # hash of the configuration at start (the default one), not of the CONFIG_PUSH that follows
    assert head["config_hash"] == fmt.config_hash(SchedConfig().to_json())
    assert head["config_hash"] != fmt.config_hash(events[0].config.to_json())
    assert lines[1]["type"] == "SNAPSHOT" and lines[1]["ts"] == head["start_ts"]
    assert [x for x in lines if x["type"] not in ("HEADER", "SNAPSHOT", "DECISION")] == [json.loads(json.dumps(e.to_json())) for e in events]
    # every snapshot separates the events in time: all before are <= its ts, all after are >
    for i, x in enumerate(lines):
        if x["type"] != "SNAPSHOT":
            continue
        ev_ts = [y["ts"] for y in lines if y["type"] not in ("HEADER", "SNAPSHOT", "DECISION")]
        before = [y["ts"] for y in lines[:i] if y["type"] not in ("HEADER", "SNAPSHOT", "DECISION")]
        after = ev_ts[len(before):]
        assert all(t <= x["ts"] for t in before) and all(t > x["ts"] for t in after)
        # at least 10 events since the previous snapshot (interval), never inside a round
        assert x["data"]["session"]["unsatisfiable"] == []
    snaps = [i for i, x in enumerate(lines) if x["type"] == "SNAPSHOT"]
    assert len(snaps) >= 5
    for a, b in zip(snaps, snaps[1:]):
        n = sum(1 for y in lines[a:b] if y["type"] not in ("HEADER", "SNAPSHOT", "DECISION"))
        assert n >= 10


def test_interval_zero_writes_only_the_initial_snapshot(tmp_path):
    record(random_events(5, njobs=40), tmp_path / "r.jsonl", snapshot_interval=0)
    kinds = [json.loads(x)["type"] for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert kinds[:2] == ["HEADER", "SNAPSHOT"] and kinds.count("SNAPSHOT") == 1


def test_iso_and_integer_timestamps_round_trip():
    assert fmt.parse_ts("1234567890123456789") == 1234567890123456789
    assert fmt.parse_ts(fmt.iso_ns(1234567890123456789)) == 1234567890123456789
    assert fmt.parse_ts("2026-07-27T12:00:00Z") == 1785153600 * 10**9
    assert fmt.parse_ts("2026-07-27T14:00:00+02:00") == 1785153600 * 10**9
    with pytest.raises(ValueError, match="neither integer nanoseconds nor ISO-8601"):
        fmt.parse_ts("yesterday")
