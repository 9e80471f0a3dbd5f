"""The worker's journal of running jobs: what a restarted worker reads back is exactly the jobs that
were started and not yet reported ended, whatever the journal went through (rewrites, a line torn by
a crash, records left by an older worker as one file per job)."""

from __future__ import annotations

import json
import os
import subprocess
import time

import psutil

from xce.procs import process_start
from xce.worker import jobstate
from xce.worker.jobstate import JOURNAL, JobRecord, JobStateDir, still_alive


def _rec(jobid: int, **kw) -> JobRecord:
    return JobRecord(jobid, 1000 + jobid, 1000 + jobid, 1.5 + jobid, **kw)


def test_a_restarted_worker_reads_back_the_running_jobs_with_their_latest_record(tmp_path):
    state = JobStateDir(tmp_path)
    for j in (1, 2, 3):
        state.save(_rec(j))
    state.remove(2)
    state.save(_rec(3, limits={"mem": 1 << 30}, gpus=["1"]))  # a run limit or a device changed
    again = JobStateDir(tmp_path).load_all()
    assert again == [_rec(1), _rec(3, limits={"mem": 1 << 30}, gpus=["1"])]
    # Reading it back leaves only the live records in the journal.
    assert len((tmp_path / JOURNAL).read_text().splitlines()) == 2


def test_the_journal_stays_small_however_many_jobs_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(jobstate, "SLACK", 10)
    state = JobStateDir(tmp_path)
    state.save(_rec(0))  # a long job
    for j in range(1, 500):
        state.save(_rec(j))
        state.remove(j)
    assert len((tmp_path / JOURNAL).read_text().splitlines()) <= 2 * 1 + 10 + 1
    assert JobStateDir(tmp_path).load_all() == [_rec(0)]


def test_a_line_torn_by_a_crash_loses_only_itself(tmp_path):
    state = JobStateDir(tmp_path)
    state.save(_rec(1))
    state.save(_rec(2))
    with open(tmp_path / JOURNAL, "a") as f:
        f.write('{"job": {"jobid": 3, "pid"')  # the worker died in the middle of this write
    assert [r.jobid for r in JobStateDir(tmp_path).load_all()] == [1, 2]


def test_records_of_an_older_worker_are_taken_in_and_their_files_removed(tmp_path):
    (tmp_path / "7.json").write_text(json.dumps({"jobid": 7, "pid": 70, "pgid": 70, "create_time": 2.0,
                                                 "limits": {}, "gpus": [], "started": 1.0}))
    (tmp_path / "8.json").write_text("{not json")
    assert [r.jobid for r in JobStateDir(tmp_path).load_all()] == [7]
    assert not list(tmp_path.glob("*.json"))
    assert [r.jobid for r in JobStateDir(tmp_path).load_all()] == [7]  # now in the journal


def test_the_journal_is_private_to_the_worker(tmp_path):
    JobStateDir(tmp_path / "jobs").save(_rec(1))
    assert os.stat(tmp_path / "jobs").st_mode & 0o777 == 0o700
    assert os.stat(tmp_path / "jobs" / JOURNAL).st_mode & 0o777 == 0o600
    JobStateDir(tmp_path / "jobs").load_all()  # rewritten
    assert os.stat(tmp_path / "jobs" / JOURNAL).st_mode & 0o777 == 0o600


def test_a_process_is_known_by_its_start_and_a_reused_or_dead_pid_is_not_it():
    p = subprocess.Popen(["sleep", "30"])
    try:
        start = process_start(p.pid)
        assert abs(start - psutil.Process(p.pid).create_time()) < 0.01
        assert still_alive(JobRecord(1, p.pid, p.pid, start))
        assert not still_alive(JobRecord(1, p.pid, p.pid, start - 1.0))  # the same pid, another process
        p.kill()
        deadline = time.monotonic() + 5
        while process_start(p.pid) is not None and time.monotonic() < deadline:  # its zombie is not it
            time.sleep(0.01)
        assert process_start(p.pid) is None and not still_alive(JobRecord(1, p.pid, p.pid, start))
    finally:
        p.kill()
        p.wait()
    assert process_start(p.pid) is None
