"""The XCE JSON-lines workload: read strictly, simulated with its own names, queues and requests."""

from __future__ import annotations

import json

import pytest

from xce.sim.cluster_file import parse_cluster_text
from xce.sim.engine import simulate
from xce.sim.swf import SwfError
from xce.sim.workload import read_workload

NS = 1_000_000_000
BASE = 1_700_000_000


def job(jobid, submit, run, tasks=1, user="alice", queue="normal", start=None, **kw):
    start = submit if start is None else start
    return {"jobid": jobid, "user": user, "queue": queue, "project": "default", "job_type": "", "priority": 0,
            "tasks": tasks, "request": "", "sched_request": kw.pop("sched_request", ""),
            "submit_time": (BASE + submit) * NS, "start_time": (BASE + start) * NS if run is not None else None,
            "end_time": (BASE + start + run) * NS if run is not None else None, "state": "DONE", **kw}


def write(tmp_path, jobs, header=None):
    p = tmp_path / "w.jsonl"
    head = header or {"xce_workload": 1, "unix_start": BASE, "hosts": 2, "slots": 4}
    p.write_text("\n".join(json.dumps(x) for x in [head, *jobs]) + "\n")
    return p


CLUSTER = """
default_queue = "normal"
[queues.normal]
priority = 10
[queues.urgent]
priority = 90
[[sim.hosts]]
prefix = "h"
count = 2
slots = 2
mem = "8G"
"""


def test_names_queues_and_requests_drive_the_simulation(tmp_path):
    jobs = [job(1, 0, 100, tasks=4, user="bob"),
            job(2, 10, 50, user="alice", queue="normal"),
            job(3, 10, 50, user="carol", queue="urgent", sched_request="rusage[mem=6G]"),
            job(4, 20, 30, user="dave", queue="urgent", sched_request="rusage[mem=6G]"),
            job(5, 30, None, user="erin")]
    trace = read_workload(write(tmp_path, jobs))
    assert list(trace.jobid) == [1, 2, 3, 4] and trace.skipped.most_common() == [("never started (killed while pending)", 1)]
    assert trace.names.user == ["bob", "alice", "carol", "dave"] and list(trace.submit) == [0, 10, 10, 20]
    res = simulate(trace, parse_cluster_text(CLUSTER))
    assert res.queue_of == ["normal", "normal", "urgent", "urgent"]
    # At t=100 the urgent queue goes first; 3 and 4 each reserve 6G of a host's 8G, so they land on
    # different hosts (without their requests both would fill h001), and 2 takes the slot left on h001.
    assert list(res.start) == [0, 100, 100, 100]
    assert [tuple(res.placement[i]) for i in (2, 3, 1)] == [(("h001", 1),), (("h002", 1),), (("h001", 1),)]


def test_a_job_line_that_is_not_a_job_names_its_line(tmp_path):
    p = write(tmp_path, [job(1, 0, 10)])
    p.write_text(p.read_text() + json.dumps({"jobid": 2, "user": "x"}) + "\n")
    with pytest.raises(SwfError, match=r"w.jsonl:3: job line without queue, tasks, submit_time"):
        read_workload(p)
    p.write_text(json.dumps({"hello": 1}) + "\n")
    with pytest.raises(SwfError, match=r"w.jsonl:1: not an XCE workload"):
        read_workload(p)
    p = write(tmp_path, [job(1, 0, 10, tasks=0)])
    with pytest.raises(SwfError, match=r"w.jsonl:2: tasks must be a whole number >= 1, got 0"):
        read_workload(p)


def test_a_dependent_job_arrives_when_what_it_waited_for_ended(tmp_path):
    jobs = [job(1, 0, 100), job(2, 0, 10, start=100, dependencies="done(1)"),
            job(3, 0, 10, start=150, begin_time=(BASE + 150) * NS), job(4, 5, 10, start=100, dependencies="exit(1, 3) || 99")]
    trace = read_workload(write(tmp_path, jobs))
    res = simulate(trace, parse_cluster_text(CLUSTER))
    by_id = {trace.jobid[i]: i for i in range(len(trace))}
    assert res.start[by_id[2]] == 100 and res.start[by_id[3]] == 150  # not at 0, when they were submitted
    assert res.start[by_id[4]] == 100  # exit(1, 3): job 1's end; job 99 is not in the workload
