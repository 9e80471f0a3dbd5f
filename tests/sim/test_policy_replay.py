"""The new pickers are replayable: a simulation recorded with one of them replays decision for
decision in a fresh process, from the start and from a snapshot taken mid-run; and a core restored
from a mid-run snapshot decides the rest exactly as the core that ran everything. ``easy_pp``
carries state across rounds (its users' run-time history), so for it these checks prove that the
state travels through the snapshot.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xce.core import SchedulerCore
from xce.replay.reader import ReplayReader
from xce.sim import read_swf, simulate, uniform_cluster

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "examples" / "traces" / "LANL-CM5-1994-4.1-cln.first155.swf"
PICKERS = ["easy_backfill_shadow", "easy_sjbf", "easy_pp", "easy_aged_sjf"]


def _record(tmp_path: Path, picker: str) -> Path:
    # The machine the trace comes from (1,024 nodes): jobs queue there, so reservations are made.
    trace = read_swf(TRACE)
    path = tmp_path / f"{picker}.jsonl"
    simulate(trace, uniform_cluster(1024, 1, None).with_picker(picker), record=path, snapshot_interval=150)
    return path


def _cli(*args):
    env = dict(os.environ, PYTHONHASHSEED="4242")
    return subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.slow
@pytest.mark.parametrize("picker", PICKERS)
def test_a_recorded_simulation_replays_without_a_mismatch_from_the_start_and_from_mid_run(tmp_path, picker):
    path = _record(tmp_path, picker)
    snaps = [r.ts for r in ReplayReader(path) if r.kind == "SNAPSHOT"]
    assert len(snaps) >= 3
    for extra in ((), ("--sim-start-ts", snaps[len(snaps) // 2])):
        proc = _cli("--sim", path, "--sim-verify", "--json", *extra)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        summary = json.loads(proc.stdout)
        assert summary["verify"]["mismatches"] == 0
        assert summary["verify"]["produced"] > 0
        if extra:
            assert summary["snapshot_ts"] == snaps[len(snaps) // 2]


def _run(events, core):
    out = []
    core._on_decision = out.append
    for e in events:
        core.clock.freeze_at(e.ts)
        core.push_event(e)
    return [d.to_json() for d in out]


@pytest.mark.parametrize("picker", PICKERS)
def test_a_core_restored_mid_run_decides_the_rest_as_the_one_that_ran_everything(tmp_path, picker):
    events = [r.item for r in ReplayReader(_record(tmp_path, picker)) if r.kind == "EVENT"]
    full = _run(events, SchedulerCore(lambda d: None, seed=1))
    for cut in (len(events) // 3, 2 * len(events) // 3):
        head_core = SchedulerCore(lambda d: None, seed=1)
        head = _run(events[:cut], head_core)
        if picker == "easy_pp":  # the point of the check: there is history to carry
            assert head_core.picker.history
        buf = io.StringIO()
        head_core.save_snapshot(buf)
        buf.seek(0)
        fresh = SchedulerCore(lambda d: None, seed=99)
        fresh.load_snapshot(buf)
        assert fresh.snapshot() == head_core.snapshot()
        assert head + _run(events[cut:], fresh) == full
