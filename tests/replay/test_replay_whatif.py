"""What-if: the state from the base recording, the events from an alternative file."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from xce.core import events as ev
from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, SchedConfig
from xce.replay.format import iso_ns
from xce.replay.writer import record
from xce.scheduler.sim_driver import SimDriver

S = 1_000_000_000


def _base():
    """One 2-slot host; jobs 1-3 want both slots. FCFS runs 1, then 2 when 1 finishes."""
    cfg = SchedConfig(queues=(QueueSpec("normal", priority=10),), projects=(ProjectSpec("default"),))
    job = lambda j, t: JobSpec(jobid=j, user="ann", queue="normal", priority=0, queue_time=t, request="", tasks=2)  # noqa: E731
    return [
        ev.ConfigPush(ts=1 * S, config=cfg),
        ev.WorkersPush(ts=1 * S, hosts=(HostSpec("h1", values={"slots": 2}),)),
        ev.JobsPush(ts=2 * S, jobs=(job(1, 2 * S),)),
        ev.BeginRound(ts=3 * S),
        ev.JobStateChange(ts=3 * S, jobid=1, state="RUN"),
        ev.JobsPush(ts=4 * S, jobs=(job(2, 4 * S),)),
        ev.JobsPush(ts=5 * S, jobs=(job(3, 5 * S),)),
        ev.BeginRound(ts=6 * S),
        ev.JobStateChange(ts=7 * S, jobid=1, state="DONE"),
        ev.BeginRound(ts=8 * S),
    ]


def _write_events(path, events, header=False):
    with open(path, "w") as fp:
        if header:
            fp.write('{"type":"HEADER","version":"1.0.0","config_hash":"x","start_ts":0,"start_wall":""}\n')
        for e in events:
            fp.write(json.dumps(e.to_json()) + "\n")


def test_raising_a_priority_changes_who_runs_and_the_report_says_so(tmp_path):
    base = tmp_path / "base.jsonl"
    recorded = record(_base(), base, snapshot_interval=3)
    assert [(d.OP, d.jobid) for d in recorded if d.OP == "DISPATCH"] == [("DISPATCH", 1), ("DISPATCH", 2)]
    alt_events = _base()
    alt_events.insert(7, ev.JobUpdate(ts=5 * S, jobid=3, priority=9))
    alt = tmp_path / "alt.jsonl"
    _write_events(alt, alt_events)

    out = io.StringIO()
    d = SimDriver(base, alt_events=alt, verify=True, keep_decisions=True, out=out, err=io.StringIO())
    summary = d.run()
    d.report(summary)
    assert [(x.OP, x.jobid) for x in d.decisions if x.OP == "DISPATCH"] == [("DISPATCH", 1), ("DISPATCH", 3)]
    assert d.exit_code == 1
    text = out.getvalue()
    at8 = f"ts={8 * S} ({iso_ns(8 * S)})"
    assert f"DIFFERENT at {at8}: recorded DISPATCH job 2 on h1x2; produced DISPATCH job 3 on h1x2" in text
    assert "outcome changes (what-if):" in text
    assert f"job 2: dispatched at {at8} on h1x2 in the recording; not dispatched in this run" in text
    assert f"job 3: not dispatched in the recording; dispatched at {at8} on h1x2" in text


def test_alt_file_with_header_from_a_later_snapshot_skips_events_already_in_it(tmp_path):
    base = tmp_path / "base.jsonl"
    record(_base(), base, snapshot_interval=3)
    snaps = [json.loads(x)["ts"] for x in base.read_text().splitlines() if '"SNAPSHOT"' in x[:20]]
    assert snaps == [1 * S - 1, 2 * S, 4 * S, 7 * S]
    alt_events = _base()
    alt_events.insert(7, ev.JobUpdate(ts=5 * S, jobid=3, priority=9))
    alt = tmp_path / "alt.jsonl"
    _write_events(alt, alt_events, header=True)
    # From the snapshot at 7 s the priority change (at 5 s) is in the past: the alt file's events up to
    # the snapshot are already part of its state and must not apply; job 2 still wins.
    d = SimDriver(base, start_ts=7 * S, alt_events=alt, keep_decisions=True, out=io.StringIO(), err=io.StringIO())
    d.run()
    assert d.snapshot_ts == 7 * S
    assert d.events == 1
    assert [(x.OP, x.jobid) for x in d.decisions if x.OP == "DISPATCH"] == [("DISPATCH", 2)]
    # From the snapshot at 4 s the change lies ahead and applies: job 3 wins.
    d = SimDriver(base, start_ts=5 * S, alt_events=alt, keep_decisions=True, out=io.StringIO(), err=io.StringIO())
    d.run()
    assert d.snapshot_ts == 4 * S
    assert [(x.OP, x.jobid) for x in d.decisions if x.OP == "DISPATCH"] == [("DISPATCH", 3)]


def test_submitting_earlier_via_the_cli(tmp_path):
    base = tmp_path / "base.jsonl"
    record(_base(), base)
    alt_events = [e for e in _base() if not (isinstance(e, ev.JobsPush) and e.jobs[0].jobid == 3)]
    job3 = ev.JobsPush(ts=3 * S, jobs=(JobSpec(jobid=3, user="ann", queue="normal", priority=0, queue_time=3 * S,
                                                request="", tasks=2),))
    alt_events.insert(4, job3)
    alt = tmp_path / "alt.jsonl"
    _write_events(alt, alt_events)
    proc = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(base), "--sim-alt-events",
                           str(alt), "--sim-verify"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ), stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert "job 3: not dispatched in the recording; dispatched at" in proc.stdout
    assert "job 2: dispatched at" in proc.stdout and "not dispatched in this run" in proc.stdout
