"""Starting a replay from a later snapshot gives exactly what a full replay gives from there on."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import random_events


def _snapshots(path):
    out = []
    with open(path) as fp:
        for lineno, line in enumerate(fp, 1):
            obj = json.loads(line)
            if obj["type"] == "SNAPSHOT":
                out.append((obj["ts"], obj["data"]["session"]["seq"], lineno))
    return out


def _run(path, **kw):
    d = SimDriver(path, keep_decisions=True, out=io.StringIO(), err=io.StringIO(), **kw)
    d.run()
    return d


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), k=st.integers(3, 40), pick=st.integers(0, 10**6), offset=st.integers(0, 2))
def test_start_at_a_later_snapshot_matches_the_full_replay(tmp_path, seed, k, pick, offset):
    path = tmp_path / f"r{seed}-{k}.jsonl"
    recorded = record(random_events(seed, njobs=60), path, seed=seed, snapshot_interval=k)
    snaps = _snapshots(path)
    assert len(snaps) >= 2
    full = _run(path)
    assert [d.to_json() for d in full.decisions] == [d.to_json() for d in recorded]
    ts, seq, lineno = snaps[1 + pick % (len(snaps) - 1)]
    # start exactly at the snapshot, or between it and the next event: same snapshot either way
    start = ts + offset
    part = _run(path, start_ts=start)
    assert part.snapshot_line == lineno
    expected = [(d.ts, d.to_json()) for d in full.decisions if d.seq > seq]
    assert [(d.ts, d.to_json()) for d in part.decisions] == expected
    assert all(d.ts > ts for d in part.decisions)
    assert part.core.snapshot() == full.core.snapshot()


def test_start_ts_before_the_recording_uses_the_first_snapshot(tmp_path):
    path = tmp_path / "r.jsonl"
    recorded = record(random_events(2, njobs=30), path, snapshot_interval=10)
    err = io.StringIO()
    d = SimDriver(path, start_ts=5, keep_decisions=True, out=io.StringIO(), err=err)
    d.run()
    assert d.snapshot_line == 2
    assert [x.to_json() for x in d.decisions] == [x.to_json() for x in recorded]
    assert "after the requested start 5" in err.getvalue()
