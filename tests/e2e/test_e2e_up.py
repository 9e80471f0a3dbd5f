"""``xce up`` / ``xce down`` as a new user would run them: up, submit, see it done, down, nothing left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from xce.procs import pid_alive

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Until ``up``/``down``/``worker`` are in xce.cli.main.COMMANDS, add them in the child process.
PRELUDE = ("import xce.cli.main as m; m.COMMANDS.setdefault('up', 'xce.cli.up'); "
           "m.COMMANDS.setdefault('down', 'xce.cli.up'); m.COMMANDS.setdefault('worker', 'xce.cli.worker')")


def xce(*args: str, env: dict[str, str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PRELUDE + "\nm.main()", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_up_submit_down(tmp_path):
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    env["HOME"] = str(tmp_path)  # a new user: nothing in ~/.xce
    up = xce("up", "--workers", "2", "--slots", "1", "--state-dir", str(state), "--report-interval", "0.5",
             "--round-interval", "0.05", env=env, cwd=tmp_path)
    assert up.returncode == 0, up.stdout + up.stderr
    pids = json.loads((state / "cluster.json").read_text())["pids"]
    try:
        assert f"export XCE_STATE_DIR={state}" in up.stdout, up.stdout
        assert "xce submit -- sleep 1" in up.stdout and "xce down" in up.stdout
        assert f"/ui/ (log in with a token: yours is in {state}/token)" in up.stdout
        assert len(pids) == 4 and all(pid_alive(p) for p in pids.values())

        user_env = dict(env, XCE_STATE_DIR=str(state))
        sub = xce("submit", "--json", "--", "sh", "-c", "echo hello from $XCE_JOBID", env=user_env, cwd=tmp_path)
        assert sub.returncode == 0, sub.stderr
        jobid = json.loads(sub.stdout)["jobid"]
        deadline = time.monotonic() + 30
        while True:
            out = xce("jobs", "-a", "--json", str(jobid), env=user_env, cwd=tmp_path)
            job = json.loads(out.stdout)["jobs"][0]
            if job["state"] in ("DONE", "EXIT") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert job["state"] == "DONE", job
        assert (tmp_path / f"xce-{jobid}.out").read_text() == f"hello from {jobid}\n"
    finally:
        down = xce("down", "--state-dir", str(state), env=env, cwd=tmp_path)
    assert down.returncode == 0, down.stdout + down.stderr
    assert "stopped" in down.stdout
    assert [name for name, pid in pids.items() if pid_alive(pid)] == []
    assert not (state / "cluster.json").exists()
