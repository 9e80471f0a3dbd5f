"""The hook runner (``xce.hooks``): Python hooks and executables, each under a time limit, their
failures logged, nothing raised into the caller and nothing blocking it."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
import threading
import time
import uuid

import pytest

from xce import hooks, plugins

EVENT = {"event": "stop", "jobid": 7, "user": "ann", "queue": "normal", "state": "DONE", "detail": 65,
         "exit_status": 0, "signal": None, "run_time_s": 1.5, "usage": {}, "end_reason": "done"}


@pytest.fixture
def runner():
    r = hooks.HookRunner(timeout_s=1.0, workers=1)
    names = set(hooks.available())
    yield r
    r.close(wait_s=5)
    for name in set(hooks.available()) - names:
        hooks.unregister(name)


def _wait(check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_an_executable_gets_the_event_on_stdin_and_in_its_environment(runner, tmp_path):
    out = tmp_path / "out"
    script = tmp_path / "hook.sh"
    script.write_text(f"#!/bin/sh\n{{ cat; echo \"$XCE_HOOK_EVENT $XCE_JOBID $XCE_EXIT_STATUS $XCE_HOOK_DETAIL\"; }} > {out}\n")
    script.chmod(0o755)
    runner.submit(EVENT, [str(script)])
    _wait(lambda: out.exists() and out.read_text().count("\n") == 2)
    body, env_line = out.read_text().splitlines()
    assert json.loads(body) == EVENT
    assert env_line == "stop 7 0 65"


def test_a_failing_executable_is_logged_with_its_last_line(runner, tmp_path, caplog):
    script = tmp_path / "fail.sh"
    script.write_text("#!/bin/sh\necho 'first' >&2\necho 'no database' >&2\nexit 4\n")
    script.chmod(0o755)
    with caplog.at_level(logging.ERROR, logger="xce.hooks"):
        runner.submit(EVENT, [str(script)])
        _wait(lambda: "exited 4" in caplog.text)
    assert f"stop hook {script} exited 4 for job 7: no database" in caplog.text


def test_a_hanging_executable_is_killed_with_its_children_and_the_next_event_runs(runner, tmp_path, caplog):
    pids, after = tmp_path / "pids", tmp_path / "after"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 1000 &\necho $! > {pids}\nwait\n")
    script.chmod(0o755)
    ok = tmp_path / "ok.sh"
    ok.write_text(f"#!/bin/sh\ntouch {after}\n")
    ok.chmod(0o755)
    with caplog.at_level(logging.ERROR, logger="xce.hooks"):
        runner.submit(EVENT, [str(script)])
        runner.submit(dict(EVENT, jobid=8), [str(ok)])
        _wait(lambda: after.exists())
    assert f"stop hook {script} killed at its limit of 1s for job 7" in caplog.text
    child = int(pids.read_text())
    _wait(lambda: not _alive(child))


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_python_hooks_failing_or_hanging_are_logged_and_the_others_still_run(runner, caplog):
    seen, release = [], threading.Event()
    name = uuid.uuid4().hex[:8]
    hooks.register(f"a_raise_{name}", lambda e: 1 / 0)
    hooks.register(f"b_hang_{name}", lambda e: release.wait(30))
    hooks.register(f"c_record_{name}", lambda e: seen.append(e["jobid"]))
    try:
        with caplog.at_level(logging.ERROR, logger="xce.hooks"):
            started = time.monotonic()
            runner.submit(EVENT)
            _wait(lambda: seen == [7])
        assert time.monotonic() - started < 5
        assert f"stop hook a_raise_{name} failed for job 7: ZeroDivisionError" in caplog.text
        assert f"stop hook b_hang_{name} did not return within 1s for job 7" in caplog.text
    finally:
        release.set()


def test_a_full_queue_drops_the_event_and_says_so(tmp_path, caplog):
    release = threading.Event()
    name = f"block_{uuid.uuid4().hex[:8]}"
    hooks.register(name, lambda e: release.wait(30))
    r = hooks.HookRunner(timeout_s=30, workers=1, capacity=1)
    try:
        with caplog.at_level(logging.ERROR, logger="xce.hooks"):
            for jobid in range(1, 4):  # one running, one queued, one too many
                r.submit(dict(EVENT, jobid=jobid))
                time.sleep(0.1)
        assert "hook queue full (1 events waiting): stop hooks of job 3 not run" in caplog.text
    finally:
        release.set()
        r.close(wait_s=5)
        hooks.unregister(name)


def test_a_name_taken_by_another_hook_is_refused():
    name = f"taken_{uuid.uuid4().hex[:8]}"

    def first(e):
        return None

    hooks.register(name, first)
    try:
        hooks.register(name, first)  # the same object again: loading twice changes nothing
        with pytest.raises(ValueError, match="already registered"):
            hooks.register(name, lambda e: None)
    finally:
        hooks.unregister(name)


def test_an_installed_entry_point_is_registered_by_load_entry_points(tmp_path, monkeypatch):
    dist = f"xce_test_hooks_{uuid.uuid4().hex[:8]}"
    info = tmp_path / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[xce.hooks]\n{dist} = {dist}_mod:hook\n")
    (tmp_path / f"{dist}_mod.py").write_text(textwrap.dedent("""
        def hook(event):
            return None
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert plugins.load_entry_points() == []
        assert dist in hooks.available()
    finally:
        hooks.unregister(dist)
        sys.modules.pop(f"{dist}_mod", None)


def test_the_event_of_each_state_move():
    assert [hooks.event_of(v, "RUN") for v in ("dispatch", "finish", "fail", "kill", "lose", "preempt", "resume",
                                               "requeue", "suspend")] == [
        "start", "stop", "stop", "stop", "stop", "preempt", "resume", None, None]
    assert hooks.event_of("kill", "PEND") is None  # it never ran: nothing stopped
