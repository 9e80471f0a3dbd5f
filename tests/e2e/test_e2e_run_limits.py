"""A real worker ends a job at its run limit: SIGTERM first, SIGKILL after the grace period."""

from __future__ import annotations

import pytest

from xce.worker.runlimit import GRACE_S

pytestmark = pytest.mark.integration


def test_jobs_are_ended_at_their_run_limit(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=3)
    polite = xce.submit("--time", "0:02", "--", "sleep", "60")
    # Ignores SIGTERM (an ignored signal stays ignored across exec): only SIGKILL ends it.
    stubborn = xce.submit("--time", "0:02", "--", "sh", "-c", "trap '' TERM; sleep 60")
    free = xce.submit("-W", "1", "--", "sh", "-c", "exit 0")

    assert xce.wait_state(free, "DONE", 30)["exit_code"] == 0
    job = xce.wait_state(polite, "EXIT", 30)
    assert job["run_limit"] == 2
    assert job["exit_signal"] == "SIGTERM"
    assert "run limit 0:00:02 reached" in job["reason"], job["reason"]
    ran = (job["end_time"] - job["start_time"]) / 1e9
    assert 1.5 <= ran < GRACE_S, ran

    job = xce.wait_state(stubborn, "EXIT", 30 + GRACE_S)
    assert job["exit_signal"] == "SIGKILL"
    assert "run limit 0:00:02 reached" in job["reason"], job["reason"]
    assert (job["end_time"] - job["start_time"]) / 1e9 >= 2 + GRACE_S - 0.5

    shown = xce("jobs", "-l", str(polite)).stdout
    assert "Run limit: 0:00:02" in shown
