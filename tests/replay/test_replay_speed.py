"""``--sim-speed N``: the virtual clock runs N times the wall clock; decisions do not change."""

from __future__ import annotations

import io
import time

from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import random_events


def test_speed_paces_the_replay_and_keeps_the_decisions(tmp_path):
    path = tmp_path / "r.jsonl"
    events = random_events(9, njobs=25, nhosts=4)
    recorded = record(events, path)
    span_s = (events[-1].ts - (events[0].ts - 1)) / 1e9
    speed = int(span_s / 0.4)  # about 0.4 s of wall time
    d = SimDriver(path, speed=speed, keep_decisions=True, out=io.StringIO(), err=io.StringIO())
    t = time.perf_counter()
    d.run()
    wall = time.perf_counter() - t
    assert wall >= span_s / speed * 0.95
    assert wall < 5
    assert [x.to_json() for x in d.decisions] == [x.to_json() for x in recorded]
    assert d.core.clock.params.num == speed
    assert d.core.now() >= events[-1].ts
