"""Preemption for real: a high-priority job stops a low one's processes, runs, and the low one resumes."""

from __future__ import annotations

import pytest
from conftest import proc_state, read_pid, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONFIG = """
default_queue = "normal"

[queues.high]
priority = 50
preemptible_queues = ["low"]
preempt_policy = "queue_priority_first"
preempt_signal = "SIGSTOP"
preemptible = false

[queues.normal]
priority = 30

[queues.low]
priority = 10
"""


def test_high_job_suspends_and_resumes_low_job(make_cluster, tmp_path):
    config = tmp_path / "preemption.toml"
    config.write_text(CONFIG)
    cluster, xce = make_cluster(workers=1, slots=1, config=config)
    low = xce.submit("-q", "low", "--", "sh", "-c", "echo $$ > low.pid; exec sleep 5")
    xce.wait_state(low, "RUN", 20)
    pid = read_pid(xce.cwd / "low.pid")
    assert proc_state(pid) in "RS"

    high = xce.submit("-q", "high", "--", "sh", "-c", "echo $$ > high.pid; exec sleep 2")
    xce.wait_state(low, "SSUSP", 20)
    wait_for(lambda: proc_state(pid) == "T", 10, "the low job's process to be stopped")
    xce.wait_state(high, "RUN", 10)
    high_pid = read_pid(xce.cwd / "high.pid")
    assert proc_state(pid) == "T" and proc_state(high_pid) in "RS"

    job = xce.wait_state(high, "DONE", 20)
    assert job["exit_code"] == 0
    xce.wait_state(low, ("RUN", "DONE"), 20)
    done = xce.wait_state(low, "DONE", 20)
    reasons = [h["reason"] for h in done["history"]]
    assert any("preempted by job" in r for r in reasons), reasons
    assert any("resumed" in r for r in reasons), reasons
