"""A real cluster: a 4-slot job behind a stream of 1-slot jobs with run limits. Under
``builtin_fcfs`` it waits until the stream ends; under ``easy_backfill`` it starts at its
reservation, when the jobs running before it reach their ends, while the stream goes on."""

from __future__ import annotations

import time

import pytest
from conftest import wait_for

pytestmark = pytest.mark.integration

CONFIG = """
[scheduler]
job_pick_plugin = "{picker}"
[queues.normal]
"""


def _run(make_cluster, tmp_path, picker: str):
    config = tmp_path / f"{picker}.toml"
    config.write_text(CONFIG.format(picker=picker))
    cluster, xce = make_cluster(workers=1, slots=4, config=config)
    first = [xce.submit("--time", "0:08", "--", "sleep", "6") for _ in range(3)]
    for j in first:
        xce.wait_state(j, "RUN", 30)
    wide = xce.submit("-n", "4", "--time", "0:05", "--", "sleep", "1")
    stream: list[int] = []
    seen_reservation = seen_delay = False
    for _ in range(8):  # two 1-slot jobs a second, each running 3 s: more than the free slots take
        base = xce.submit("--array", "2", "--time", "0:04", "--", "sleep", "3")
        stream += [base, base + 1]
        if picker == "easy_backfill":
            if not seen_reservation:
                reasons = xce.job(wide).get("pend_reasons") or []
                seen_reservation = any("holds a reservation" in r.get("text", "") for r in reasons)
            if not seen_delay and len(stream) > 2:
                held = xce("jobs", "-l", str(stream[-3])).stdout  # submitted a second ago
                seen_delay = f"would delay job {wide}, which holds a reservation" in held
        time.sleep(1)
    jobs = wait_for(lambda: (js := {j["jobid"]: j for j in xce.jobs()})
                    and all(js.get(i, {}).get("state") == "DONE" for i in [*first, wide, *stream]) and js,
                    120, "every job to finish", interval=0.5)
    return jobs, first, wide, stream, (seen_reservation, seen_delay)


def test_builtin_fcfs_starves_the_wide_job_easy_backfill_starts_it_at_its_reservation(make_cluster, tmp_path):
    jobs, first, wide, stream, _ = _run(make_cluster, tmp_path, "builtin_fcfs")
    last_stream_start = max(jobs[j]["start_time"] for j in stream)
    assert jobs[wide]["start_time"] >= last_stream_start, "builtin_fcfs let the wide job in before the stream ended"

    jobs, first, wide, stream, seen = _run(make_cluster, tmp_path, "easy_backfill")
    started = jobs[wide]["start_time"]
    reservation = max(jobs[j]["start_time"] for j in first) + 8 * 10**9  # the first jobs' run limits
    assert started <= reservation + 3 * 10**9, (started - reservation) / 1e9
    later = [j for j in stream if jobs[j]["start_time"] > started]
    assert later, "the stream should go on after the wide job started"
    assert seen[0], "the wide job's pend reasons never said it holds a reservation"
    assert seen[1], "no job held back by backfilling said in xce jobs -l which job it would delay"
