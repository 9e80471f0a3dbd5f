"""Site hooks on a live cluster (issue 24).

A queue's ``stop`` executable and an ``xce.hooks`` entry point (a real distribution on the
controller's PYTHONPATH) both get every job of a small workload as it ends, with its exit status,
signal, run time, usage and end reason (HOOK_DETAIL_JOB_STOP). A second queue's stop hook hangs:
it is killed at ``[hooks] timeout_s`` with its process group, and jobs keep being dispatched and
finished while it hangs.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HOOK_MODULE = """
    import json, os

    def record(event):
        with open(os.environ["XCE_TEST_HOOK_OUT"], "a") as f:
            f.write(json.dumps(event) + "\\n")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_stop_hooks_get_every_job_and_a_hanging_hook_is_killed(make_cluster, tmp_path, monkeypatch):
    stops, py_stops, hang_pids = tmp_path / "stops.jsonl", tmp_path / "py-stops.jsonl", tmp_path / "hang.pids"
    stop = tmp_path / "stop.sh"
    stop.write_text(f"#!/bin/sh\ncat >> {stops}\n")
    hang = tmp_path / "hang.sh"
    hang.write_text(f"#!/bin/sh\necho $$ >> {hang_pids}\nexec sleep 1000\n")
    for f in (stop, hang):
        f.chmod(0o755)
    # An installed distribution with an xce.hooks entry point, seen by the controller.
    plugin = tmp_path / "plugin"
    info = plugin / "xce_test_hooks-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xce_test_hooks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[xce.hooks]\nrecord = xce_test_hook_module:record\n")
    (plugin / "xce_test_hook_module.py").write_text(textwrap.dedent(HOOK_MODULE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(plugin), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("XCE_TEST_HOOK_OUT", str(py_stops))
    config = tmp_path / "xce.toml"
    config.write_text(textwrap.dedent(f"""
        [hooks]
        timeout_s = 25
        [queues.normal.hooks]
        stop = "{stop}"
        [queues.slow.hooks]
        stop = "{hang}"
    """))
    cluster, xce = make_cluster(workers=2, slots=2, report_interval=0.25, config=config)

    # The hanging hook first: a job of "slow" ends and its stop hook hangs.
    slow = xce.submit("-q", "slow", "--", "true")
    xce.wait_state(slow, "DONE")
    pid = wait_for(lambda: hang_pids.exists() and int(hang_pids.read_text().split()[0]), 20, "the hanging hook")
    hung_at = time.monotonic()

    # While it hangs, a small workload runs to its end: ok, failed, killed by a signal, using memory.
    hold = "b = bytearray(40 << 20); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(1.5)"
    jobs = {
        xce.submit("--", sys.executable, "-c", hold): (0, None),
        xce.submit("--", "sh", "-c", "sleep 1; exit 3"): (3, None),
        xce.submit("--", "sh", "-c", "sleep 1"): (0, None),
    }
    killed = xce.submit("--", "sleep", "60")
    xce.wait_state(killed, "RUN", timeout=30)
    time.sleep(1.0)  # a usage tick or two
    xce("kill", str(killed))
    for jobid in jobs:
        xce.wait_state(jobid, ("DONE", "EXIT"), timeout=30)
    xce.wait_state(killed, "EXIT", timeout=30)
    # Scheduling went on while the hook hung: everything above ended within its limit.
    assert _alive(pid) and time.monotonic() - hung_at < 25, "the workload waited for the hanging hook"

    wait_for(lambda: not _alive(pid), 40, "the hanging hook to be killed at its limit")
    log = (cluster.log_dir / "controller.log").read_text()
    assert f"stop hook {hang} killed at its limit of 25s for job {slow}" in log, log[-3000:]

    everyone = [*jobs, killed]
    for path in (stops, py_stops):
        got = wait_for(lambda: {e["jobid"]: e for e in _lines(path) if e["jobid"] in everyone}
                       if len({e["jobid"] for e in _lines(path)} & set(everyone)) == len(everyone) else None,
                       30, f"stop events of jobs {everyone} in {path.name}")
        for jobid, (code, sig) in jobs.items():
            e = got[jobid]
            assert (e["event"], e["detail"], e["exit_status"], e["signal"]) == ("stop", 65, code, sig), e
            assert e["run_time_s"] >= 0.9 and e["usage"]["samples"] >= 1, e
            assert e["usage"]["peak"]["memory_rss"] > 0, e
        k = got[killed]
        # Killed: the controller decided the end (its reason); the signal is the worker's to report later.
        assert (k["state"], k["end_reason"]) == ("EXIT", "killed by " + k["user"]), k
    big = next(e for e in _lines(stops) if e["jobid"] == next(iter(jobs)))
    assert big["usage"]["peak"]["memory_rss"] >= 40 << 20, big


PREEMPT_CONFIG = """
default_queue = "low"
[queues.high]
priority = 50
preemptible_queues = ["low"]
preempt_policy = "queue_priority_first"
[queues.low]
priority = 10
[queues.low.hooks]
start = "{hook}"
stop = "{hook}"
preempt = "{hook}"
resume = "{hook}"
"""


def test_start_preempt_resume_and_stop_hooks_follow_a_preempted_job(make_cluster, tmp_path):
    events = tmp_path / "events.jsonl"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >> {events}\n")
    hook.chmod(0o755)
    config = tmp_path / "xce.toml"
    config.write_text(PREEMPT_CONFIG.format(hook=hook))
    cluster, xce = make_cluster(workers=1, slots=1, config=config)
    low = xce.submit("-q", "low", "--", "sleep", "4")
    xce.wait_state(low, "RUN", 20)
    high = xce.submit("-q", "high", "--", "sleep", "1")
    xce.wait_state(high, "DONE", 30)
    xce.wait_state(low, "DONE", 30)

    def mine():
        got = [e for e in _lines(events) if e["jobid"] == low]
        return got if [e["event"] for e in got] == ["start", "preempt", "resume", "stop"] else None
    start, preempt, resume, stop = wait_for(mine, 20, lambda: f"low's four events (have {_lines(events)})")
    assert start["host"] and start["placement"] and "detail" not in start
    assert preempt["detail"] == 65 and preempt["state"] == "SSUSP" and f"by job {high}" in preempt["end_reason"]
    assert preempt["run_time_s"] > 0 and resume["state"] == "RUN"
    assert (stop["detail"], stop["exit_status"], stop["state"]) == (65, 0, "DONE")
    assert all(e["jobid"] != high for e in _lines(events))  # the high queue has no hooks
