"""What an administrator reads: structured logs at the right levels, and ``xceadmin check`` on a
cluster that is well and then not (scheduler dead, a worker silent, a controller gone)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest
from ha_harness import wait_for

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def json_lines(path) -> list[dict]:
    """Every line of a log, each of which must be one JSON object."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                raise AssertionError(f"{path.name}:{n} is not JSON: {line!r}") from None
    return out


def xceadmin(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    return subprocess.run([sys.executable, "-m", "xce.cli.admin", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_logs_and_check_on_a_cluster_that_is_well_then_not(tmp_path, pg_url):
    cluster = LocalCluster(tmp_path / "state", workers=2, slots=1, db=pg_url, controllers=2, worker_timeout=2.0,
                           round_interval=0.05, report_interval=0.3, log_level="DEBUG", log_format="json")
    cluster.start()
    try:
        sd = cluster.state_dir
        jobid = cluster.request("POST", "/v1/jobs", {"command": ["true"], "cwd": str(tmp_path)}, role="admin")["jobid"]
        wait_for(lambda: cluster.request("GET", f"/v1/jobs/{jobid}")["state"] == "DONE", 30, "the job to finish")

        well = xceadmin("check", "--state-dir", str(sd))
        assert well.returncode == 0, well.stdout + well.stderr
        lines = well.stdout.splitlines()
        assert lines[-1] == "all well" and all(line.startswith("OK") for line in lines[:-1]), well.stdout
        assert sum("controller http://" in line for line in lines) == 2
        assert any("leader (term 1" in line for line in lines) and any("follower of" in line for line in lines)
        for what in ("database postgresql", "clocks:", "scheduler:", "workers: 2 reporting"):
            assert any(what in line for line in lines), (what, well.stdout)

        # Now break it: the scheduler dies, a worker stops answering, a third address is dead.
        cluster.kill("scheduler")
        silent = cluster.worker_names[1]
        os.kill(cluster.procs[silent].pid, signal.SIGSTOP)
        try:
            ctl_log = sd / "logs" / "controller-1.log"
            wait_for(lambda: "scheduler lost" in ctl_log.read_text() and f"worker {silent} unreachable" in ctl_log.read_text(),
                     30, "the leader to notice the scheduler and the worker gone")
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                dead = f"http://127.0.0.1:{s.getsockname()[1]}"
            sick = xceadmin("check", "--state-dir", str(sd), "--url", ",".join([dead, *cluster.urls]),
                            "--scheduler-silence", "2")
            as_json = json.loads(xceadmin("check", "--state-dir", str(sd), "--json", "--scheduler-silence", "2").stdout)
        finally:
            os.kill(cluster.procs[silent].pid, signal.SIGCONT)
        assert sick.returncode == 1, sick.stdout + sick.stderr
        problems = [line for line in sick.stdout.splitlines() if line.startswith("PROBLEM")]
        assert any(f"controller {dead}: does not answer" in p for p in problems), sick.stdout
        assert any("scheduler: has not read the event log for" in p for p in problems), sick.stdout
        assert any(f"workers: 1 not reporting: {silent}" in p for p in problems), sick.stdout
        assert sick.stdout.splitlines()[-1] == f"{len(problems)} problem(s)"
        assert as_json["ok"] is False and {c["what"] for c in as_json["checks"] if not c["ok"]} == {"scheduler", "workers"}

        # The logs: JSON, one object per line, at the levels the admin guide gives.
        ctl = json_lines(ctl_log)
        changes = [e for e in ctl if e.get("job") == jobid and e["level"] == "INFO"]
        assert [(e.get("from"), e["to"]) for e in changes] == [(None, "PEND"), ("PEND", "RUN"), ("RUN", "DONE")]
        assert changes[1]["msg"].startswith(f"job {jobid} PEND -> RUN")
        lost = [e for e in ctl if e["level"] == "WARNING" and e.get("host") == silent]
        assert lost and lost[0]["msg"].startswith(f"worker {silent} unreachable")
        assert any(e["level"] == "WARNING" and e["msg"].startswith("scheduler lost") for e in ctl)
        assert any(e["level"] == "WARNING" and e.get("term") == 1 and "leads" in e["msg"] for e in ctl)
        assert all(e["process"] == "controller" for e in ctl)
        rounds = [e for e in json_lines(sd / "logs" / "scheduler.log") if e["level"] == "DEBUG" and "round" in e]
        assert rounds and all({"events", "decisions", "pending", "ms"} <= set(e) for e in rounds)
        assert any(e.get("dispatch") == 1 for e in rounds)
        for name in cluster.worker_names:
            assert json_lines(sd / "logs" / f"{name}.log")  # JSON as well
        json_lines(sd / "logs" / "controller-2.log")
    finally:
        cluster.stop()
