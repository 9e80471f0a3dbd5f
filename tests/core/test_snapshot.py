"""Snapshot and restore: a loaded core is indistinguishable from one that replayed the events."""

import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from xce.core import SchedulerCore
from xce.core.snapshot import SnapshotError
from xce.testing.scenarios import random_events


def run(events, core=None):
    out = []
    core = core or SchedulerCore(out.append, seed=1)
    core._on_decision = out.append
    for e in events:
        core.clock.freeze_at(e.ts)
        core.push_event(e)
    return core, [d.to_json() for d in out]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.floats(0.05, 0.95))
def test_snapshot_after_k_then_replay_the_rest_equals_replaying_everything(seed, cut):
    events = random_events(seed, njobs=80, nhosts=5)
    k = int(len(events) * cut)
    full_core, full = run(events)
    head_core, head = run(events[:k])
    buf = io.StringIO()
    head_core.save_snapshot(buf)
    buf.seek(0)
    fresh = SchedulerCore(lambda d: None, seed=999)
    fresh.load_snapshot(buf)
    fresh.validate()
    assert fresh.snapshot() == head_core.snapshot()
    tail_core, tail = run(events[k:], fresh)
    assert head + tail == full
    assert tail_core.snapshot() == full_core.snapshot()


def test_snapshot_is_plain_json_with_an_object_table():
    core, _ = run(random_events(3, njobs=60))
    data = json.loads(json.dumps(core.snapshot()))
    assert data["version"] == 1
    texts = data["objects"]["requests"]
    assert len(texts) == len(set(texts))
    assert all(isinstance(j["request"], int) for j in data["jobs"])


def test_bad_snapshots_say_what_is_wrong():
    core = SchedulerCore(lambda d: None)
    with pytest.raises(SnapshotError, match="not valid JSON"):
        core.load_snapshot(io.StringIO('{"version": 1, "jobs": ['))
    with pytest.raises(SnapshotError, match="version 7 is not supported"):
        core.load_snapshot(io.StringIO('{"version": 7}'))
    with pytest.raises(SnapshotError, match="malformed snapshot: missing key .config."):
        core.load_snapshot(io.StringIO('{"version": 1}'))
    with pytest.raises(SnapshotError, match="nested too deep"):
        core.load_snapshot(io.StringIO("[" * 100_000))
    with pytest.raises(SnapshotError, match="not valid JSON text"):
        core.load_snapshot(io.BytesIO(b'{"version": 1, "x": "\xff"}'))
    with pytest.raises(SnapshotError, match="malformed snapshot"):
        core.load_snapshot(io.StringIO('{"version": 1, "config": [1, 2], "resources": 5}'))
