"""Queue-level pend reasons on a live cluster (issue 24): ``xce jobs -l`` says why a job of an
inactive queue or of a queue at its limit waits, instead of "none reported yet", and the reason
goes away when the queue dispatches again."""

from __future__ import annotations

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONFIG = """
default_queue = "normal"
[queues.normal]
max_running = 1
[queues.parked]
active = false
"""


def test_jobs_l_names_the_queue_that_holds_a_job_back(make_cluster, tmp_path):
    config = tmp_path / "xce.toml"
    config.write_text(CONFIG)
    cluster, xce = make_cluster(workers=1, slots=4, config=config)
    parked = xce.submit("-q", "parked", "--", "true")
    first = xce.submit("--", "sleep", "3")
    second = xce.submit("--", "true")

    def reason(jobid):
        return xce("jobs", "-l", str(jobid)).stdout

    wait_for(lambda: "[queue] queue inactive" in reason(parked), 30, lambda: reason(parked))
    xce.wait_state(first, "RUN", 30)
    wait_for(lambda: "[queue] queue limit: 1 of 1 running" in reason(second), 30, lambda: reason(second))
    # The limit no longer holds once the first job ends: the second runs.
    assert xce.wait_state(second, "DONE", 30)["exit_code"] == 0
    assert xce.job(parked)["state"] == "PEND"
