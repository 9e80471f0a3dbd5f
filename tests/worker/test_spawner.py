"""The spawner forks jobs' processes and stays their parent: exit statuses reach the worker (and an
exit file only when the worker could not pass them on), start failures arrive with their reason,
and it outlives a killed worker until its last job has ended (then it goes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from xce.worker import launch, runner, spawner
from xce.worker.identity import StartError


def _spec(tmp_path, argv, **kw) -> launch.LaunchSpec:
    ident = runner.resolve_identity("", run_as_self=True, allow_root=True)
    return launch.LaunchSpec(argv=argv, env={"PATH": "/usr/bin:/bin"}, cwd=str(tmp_path), stdout=str(tmp_path / "out"),
                             stderr=str(tmp_path / "out"), identity=ident,
                             exit_file=str(tmp_path / kw.pop("exit_name", "job.exit")), **kw)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_exit_codes_and_signals_reach_the_worker_with_no_file_per_job(tmp_path):
    child = launch.launch(_spec(tmp_path, ["sh", "-c", "echo hello; exit 3"]))
    assert isinstance(child, spawner.SpawnedChild) and child.wait(10) == 3
    assert (tmp_path / "out").read_text() == "hello\n"
    child.forget()
    child = launch.launch(_spec(tmp_path, ["sh", "-c", "kill -TERM $$"]))
    assert child.wait(10) == -signal.SIGTERM
    child.forget()
    assert not (tmp_path / "job.exit").exists()  # its worker was there to be told


def test_ends_a_killed_worker_had_not_passed_on_are_written_down_for_the_next_one(tmp_path):
    script = textwrap.dedent(f"""
        import os
        from xce.worker import launch, runner
        ident = runner.resolve_identity("", run_as_self=True, allow_root=True)
        def start(code, name):
            return launch.launch(launch.LaunchSpec(argv=["sh", "-c", f"exit {{code}}"], env={{"PATH": "/usr/bin:/bin"}},
                                 cwd={str(tmp_path)!r}, stdout="/dev/null", stderr="/dev/null", identity=ident,
                                 exit_file={str(tmp_path)!r} + "/" + name))
        reported, unreported = start(5, "reported.exit"), start(6, "unreported.exit")
        assert reported.wait(10) == 5 and unreported.wait(10) == 6
        reported.forget()  # on record at the controller
        os.kill(os.getpid(), 9)
    """)
    worker = subprocess.run([sys.executable, "-c", script], stdout=subprocess.DEVNULL, timeout=60)
    assert worker.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while not (tmp_path / "unreported.exit").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(int((tmp_path / "unreported.exit").read_text())) == 6
    assert not (tmp_path / "reported.exit").exists()


def test_a_start_that_fails_says_why_and_leaves_nothing_running(tmp_path):
    with pytest.raises(StartError, match="command not found: no-such-program-spw"):
        launch.launch(_spec(tmp_path, ["no-such-program-spw"]))
    seen: list[int] = []

    def broken(pid: int) -> None:
        seen.append(pid)
        raise RuntimeError("no control group today")

    with pytest.raises(StartError, match="preparing the job's process failed: no control group today"):
        launch.launch(_spec(tmp_path, ["touch", str(tmp_path / "never.ran")], prepare=[broken]))
    assert len(seen) == 1 and _gone(seen[0])
    assert not (tmp_path / "never.ran").exists()


def test_a_start_whose_only_preparation_is_a_join_is_done_by_the_spawner_before_the_job_runs(tmp_path):
    # A regular file stands in for cgroup.procs: what the spawner wrote there before letting the job go
    # is the job's pid, and the job saw it written.
    procs = tmp_path / "cgroup.procs"
    procs.write_text("")
    child = launch.launch(_spec(tmp_path, ["sh", "-c", f"cat {procs}"], prepare=[launch.Join((str(procs),))]))
    assert child.wait(10) == 0
    assert (tmp_path / "out").read_text() == str(child.pid) == procs.read_text()
    child.forget()
    with pytest.raises(StartError, match="preparing the job's process failed: .*No such file"):
        launch.launch(_spec(tmp_path, ["touch", str(tmp_path / "never.ran")],
                            prepare=[launch.Join((str(tmp_path / "gone" / "cgroup.procs"),))]))
    assert not (tmp_path / "never.ran").exists()


def test_quick_jobs_back_to_back_never_wait_for_each_other(tmp_path):
    """Pipe numbers are reused from one start to the next: a job that ended before its start was
    told must not take the next job's answer with it (it did: that start then hung for 30 s)."""
    slowest = 0.0
    running = []
    for i in range(300):
        t = time.monotonic()
        running.append(launch.launch(_spec(tmp_path, ["true"], exit_name=f"{i % 8}.exit")))
        slowest = max(slowest, time.monotonic() - t)
        if len(running) > 3:
            assert running.pop(0).wait(10) == 0
    assert all(c.wait(10) == 0 for c in running)
    assert slowest < 5.0, slowest


def test_the_spawner_outlives_a_killed_worker_records_the_end_and_then_goes(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        from xce.worker import launch, runner, spawner
        ident = runner.resolve_identity("", run_as_self=True, allow_root=True)
        c = launch.launch(launch.LaunchSpec(argv=["sh", "-c", "sleep 1; exit 7"], env={{"PATH": "/usr/bin:/bin"}},
                          cwd={str(tmp_path)!r}, stdout="/dev/null", stderr="/dev/null", identity=ident,
                          exit_file={str(tmp_path / "job.exit")!r}))
        print(spawner.shared().proc.pid, c.pid, flush=True)
        os.kill(os.getpid(), 9)
    """)
    # Its output pipe is the spawner's too: read the one line, not until the end of the pipe.
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    line = worker.stdout.readline()
    assert worker.wait(60) == -signal.SIGKILL, line
    worker.stdout.close()
    spawner_pid, job_pid = map(int, line.split())
    try:
        assert not _gone(spawner_pid) and not _gone(job_pid)
        os.kill(spawner_pid, signal.SIGTERM)  # blocked: only SIGKILL ends it while a job runs
        deadline = time.monotonic() + 15
        while not _gone(spawner_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(job_pid) and _gone(spawner_pid)
        assert os.waitstatus_to_exitcode(int((tmp_path / "job.exit").read_text())) == 7
    finally:
        for pid in (spawner_pid, job_pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_many_running_jobs_do_not_exhaust_the_spawner_and_each_keeps_the_workers_limit(tmp_path):
    """With the worker's soft limit of 64 open files the spawner still runs 100 jobs at once, and
    every job starts with that limit of 64."""
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        from xce.worker import launch, runner
        ident = runner.resolve_identity("", run_as_self=True, allow_root=True)
        children = [launch.launch(launch.LaunchSpec(
            argv=["sh", "-c", "ulimit -n; sleep 1"], env={{"PATH": "/usr/bin:/bin"}}, cwd={str(tmp_path)!r},
            stdout={str(tmp_path)!r} + f"/{{i}}.out", stderr="/dev/null", identity=ident,
            exit_file={str(tmp_path)!r} + f"/{{i}}.exit")) for i in range(100)]
        print(sorted({{c.wait(30) for c in children}}), flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[0]", out.stderr[-2000:]
    assert {(tmp_path / f"{i}.out").read_text() for i in range(100)} == {"64\n"}
