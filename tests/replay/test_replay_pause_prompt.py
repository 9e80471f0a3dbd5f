"""The pause prompt (as on a terminal): state, pending, snapshot FILE, continue."""

from __future__ import annotations

import io
import json

from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver
from xce.testing.scenarios import random_events


def test_prompt_commands_then_continue(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    recorded = record(random_events(4, njobs=50, nhosts=3), path)
    rounds = [json.loads(x)["ts"] for x in path.read_text().splitlines() if '"BEGIN_ROUND"' in x[:30]]
    pause = rounds[3]
    snap = tmp_path / "at-pause.json"
    monkeypatch.setattr("sys.stdin", io.StringIO(f"state\npending\nsnapshot {snap}\nbogus\ncontinue\n"))
    out = io.StringIO()
    d = SimDriver(path, pause_at=pause, interactive=True, keep_decisions=True, out=out, err=io.StringIO())
    d.run()
    text = out.getvalue()
    assert text.count(f"paused at ts={pause}") == 2
    assert "pending" in text and ": PEND job" not in text.splitlines()[0]
    pend_lines = [x for x in text.splitlines() if x.startswith("job ") and "PEND job" in x]
    assert pend_lines, text
    assert f"snapshot written to {snap}" in text
    assert "commands: state | pending | snapshot FILE | continue | quit" in text
    hosts = [x.split() for x in text.splitlines() if " slots " in x and " jobs " in x]
    assert len(hosts) == 6, text  # shown at the pause and by "state"
    # A host uses slots exactly when some job runs there.
    assert all((int(h[3].split("/")[0]) > 0) == (int(h[-1]) > 0) for h in hosts), text
    assert any(int(h[-1]) > 0 for h in hosts), text
    assert json.loads(snap.read_text())["clock"][0] == pause
    # continuing replays everything: same decisions as the recording
    assert [x.to_json() for x in d.decisions] == [x.to_json() for x in recorded]
    assert d.stopped is False


def test_prompt_quit_stops(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    record(random_events(4, njobs=50, nhosts=3), path)
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    d = SimDriver(path, pause_at=10 * 10**9, interactive=True, out=io.StringIO(), err=io.StringIO())
    s = d.run()
    assert s["stopped"] is True and s["paused_at"] == 10 * 10**9
