"""Accounting for real: what a job really uses is charged, and a job that does not fit waits with a reason.

Evidence used: the scheduler's own decisions. Job A reserves nothing and holds 300 MB. Once its
usage has arrived, job B reserves (available memory as the worker reports it now) - 150 MB. The
reported figure already excludes A's 300 MB, so B would fit if A were charged nothing; B waits
with an ``rusage`` pend reason on ``mem`` only because A is charged max(reserved=0, actual=300 MB).
When A ends, B runs.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MB = 1024 * 1024


def _rss(job):
    last = job.get("usage", {}).get("last", {})
    return last.get("memory_rss", last.get("mem", 0))


def _reasons(job) -> str:
    return json.dumps(job.get("pend_reasons", []))


def test_real_usage_is_charged_and_oversubscription_waits(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=3)
    host = cluster.worker_names[0]
    hold = "b = bytearray(300 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(8)"
    a = xce.submit("--", sys.executable, "-c", hold)
    xce.wait_state(a, "RUN", 20)
    job_a = wait_for(lambda: (j := xce.job(a)) and _rss(j) >= 280 * MB and j, 20, "job A's usage to arrive")
    assert _rss(job_a) < 400 * MB

    # Let the worker's next load report include A's memory, then take the figure the scheduler sees.
    import time
    time.sleep(1.0)
    avail = next(h for h in cluster.hosts() if h["name"] == host)["load"]["mem"]
    want_mb = (avail - 150 * MB) // MB
    b = xce.submit("-R", f"rusage[mem={want_mb}]", "--", "true")
    job_b = wait_for(lambda: (j := xce.job(b)) and j["pend_reasons"] and j, 10, "job B's pend reasons")
    assert job_b["state"] == "PEND", job_b
    assert "rusage" in _reasons(job_b) and "mem" in _reasons(job_b), job_b["pend_reasons"]
    assert xce.job(a)["state"] == "RUN"

    # Far more memory than the host has: refused in one line, or, when the user insists, waits saying
    # why it cannot run here.
    refused = xce("submit", "-R", f"rusage[mem={2 * avail // MB}]", "--", "true", check=False)
    assert refused.returncode == 1 and "can never run on this cluster" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    huge = xce.submit("--allow-pending-forever", "-R", f"rusage[mem={2 * avail // MB}]", "--", "true")
    job_huge = wait_for(lambda: (j := xce.job(huge)) and j["pend_reasons"] and j, 10, "the huge job's reasons")
    assert job_huge["state"] == "PEND" and "cannot run on the current cluster" in _reasons(job_huge), job_huge["pend_reasons"]
    xce("kill", str(huge))

    assert xce.wait_state(a, "DONE", 20)["exit_code"] == 0
    assert xce.wait_state(b, "DONE", 20)["exit_code"] == 0
