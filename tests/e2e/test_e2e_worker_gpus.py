"""GPU hand-out by a real worker agent (no controller needed: reports stay in its outbox).

The machine running the tests may have no GPU, so the device list NVML would give is set by hand;
the processes, environment and bookkeeping are real.
"""

from __future__ import annotations

import time

from xce.worker.agent import Agent
from xce.worker.jobstate import JobStateDir


def _agent(tmp_path) -> Agent:
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True)
    a.gpu_ids = ["0", "1", "2", "3"]
    return a


def _job(jobid: int, cwd, gpus: int, placement=(("h1", 1),)) -> dict:
    return {"jobid": jobid, "user": "x", "tasks": sum(n for _, n in placement),
            "command": ["sh", "-c", "echo $CUDA_VISIBLE_DEVICES; sleep 2"],
            "cwd": str(cwd), "requests": {"xce.io/gpu": gpus} if gpus else {}, "placement": [list(p) for p in placement]}


def test_a_parallel_jobs_gpus_are_per_task_on_each_of_its_hosts(tmp_path):
    a = _agent(tmp_path)
    try:
        a._start(_job(1, tmp_path, 1, placement=(("h1", 2), ("h2", 1))))  # its first host: 2 tasks, 2 devices
        a._start(_job(2, tmp_path, 1, placement=(("h0", 1), ("h1", 2))))  # a second host of it: 2 tasks here
        a._start(_job(3, tmp_path, 1, placement=(("h0", 1), ("h1", 1))))  # nothing left here: refused
        assert a.jobs[1].gpus == ["0", "1"] and a.jobs[2].gpus == ["2", "3"] and 3 not in a.jobs
    finally:
        for jp in list(a.jobs.values()):
            jp.kill_now("test over")
            if jp.popen:
                jp.popen.wait()


def test_gpus_are_picked_lowest_free_first_and_refused_when_short(tmp_path):
    a = _agent(tmp_path)
    try:
        a._start(_job(1, tmp_path, 2))
        a._start(_job(2, tmp_path, 1))
        a._start(_job(3, tmp_path, 2))  # only one left: refused
        a._start(_job(4, tmp_path, 0))
        assert a.jobs[1].gpus == ["0", "1"] and a.jobs[2].gpus == ["2"] and a.jobs[4].gpus == []
        assert 3 not in a.jobs
        reports = []
        while not a.outbox.empty():
            reports.append(a.outbox.get_nowait())
        failed = [body for kind, _, body, _ in reports if kind == "status" and body["jobid"] == 3]
        assert failed and failed[0]["status"] == "start_failed" and "GPU" in failed[0]["reason"]
        deadline = time.monotonic() + 5
        while not (tmp_path / "xce-2.out").exists() or not (tmp_path / "xce-2.out").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert (tmp_path / "xce-1.out").read_text() == "0,1\n"
        assert (tmp_path / "xce-2.out").read_text() == "2\n"
        # What a restarted worker would read back: job 1 with its devices.
        kept = {r.jobid: r for r in JobStateDir(tmp_path / "jobs").load_all()}
        assert kept[1].gpus == ["0", "1"] and 3 not in kept
    finally:
        for jp in list(a.jobs.values()):
            jp.kill_now("test over")
            if jp.popen:
                jp.popen.wait()


def test_a_gpu_limit_caps_the_devices_the_job_sees(tmp_path):
    """``--limit xce.io/gpu=N``: at most N of its devices are visible; with none handed out, none."""
    a = _agent(tmp_path)
    try:
        a._start(_job(1, tmp_path, 2) | {"limits": {"xce.io/gpu": 1}})
        a._start(_job(2, tmp_path, 0) | {"limits": {"xce.io/gpu": 0},
                                         "command": ["sh", "-c", "echo \"[${CUDA_VISIBLE_DEVICES-unset}]\""]})
        deadline = time.monotonic() + 5
        while not all((tmp_path / f"xce-{j}.out").exists() and (tmp_path / f"xce-{j}.out").read_text()
                      for j in (1, 2)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert (tmp_path / "xce-1.out").read_text() == "0\n"  # holds 0 and 1, sees 0
        assert (tmp_path / "xce-2.out").read_text() == "[]\n"  # set and empty: no device at all
    finally:
        for jp in list(a.jobs.values()):
            jp.kill_now("test over")
            if jp.popen:
                jp.popen.wait()
