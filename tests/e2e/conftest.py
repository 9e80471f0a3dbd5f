"""End-to-end fixtures: real clusters on 127.0.0.1 (controller, scheduler, workers) and the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from xce.cluster import LocalCluster
from xce.testing.wait import wait_for  # noqa: F401  (tests import it from here)

#: Short intervals keep the suite fast without changing what is tested.
FAST = {"round_interval": 0.05, "report_interval": 0.5}


class Cli:
    """Runs ``xce ...`` as a user would, against one cluster (XCE_STATE_DIR)."""

    def __init__(self, cluster: LocalCluster, cwd: Path) -> None:
        self.cluster = cluster
        self.cwd = cwd

    def __call__(self, *args: str, check: bool = True, prelude: str = "") -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "xce.cli.main", *args] if not prelude else \
            [sys.executable, "-c", prelude + "\nfrom xce.cli.main import main; main()", *args]
        r = subprocess.run(cmd, env=self.cluster.env(), cwd=self.cwd, capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"xce {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    def submit(self, *args: str) -> int:
        out = json.loads(self("submit", "--json", *args).stdout)
        return int(out["jobid"])

    def job(self, jobid: int) -> dict[str, Any]:
        return json.loads(self("jobs", "-l", "--json", str(jobid)).stdout)["jobs"][0]

    def jobs(self) -> list[dict[str, Any]]:
        return json.loads(self("jobs", "-a", "--json").stdout)["jobs"]

    def wait_state(self, jobid: int, states: str | tuple[str, ...], timeout: float = 30.0) -> dict[str, Any]:
        states = (states,) if isinstance(states, str) else states
        job = wait_for(lambda: (j := self.job(jobid))["state"] in states and j, timeout,
                       lambda: f"job {jobid} to reach {states} (now {self.job(jobid)['state']})")
        return job




@pytest.fixture
def make_cluster(tmp_path_factory):
    """A factory: ``make_cluster(workers=..., slots=..., **options)`` -> (cluster, cli); stopped at teardown."""
    started: list[LocalCluster] = []

    def make(workers: int = 1, slots: int = 1, **options: Any) -> tuple[LocalCluster, Cli]:
        base = tmp_path_factory.mktemp("xce")
        work = base / "work"
        work.mkdir()
        cluster = LocalCluster(base / "state", workers, slots, **{**FAST, **options})
        started.append(cluster)
        cluster.start()
        return cluster, Cli(cluster, work)

    yield make
    for c in started:
        c.stop()


def proc_state(pid: int) -> str:
    """The one-letter state of /proc/PID/stat (R, S, T, Z, ...)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def read_pid(path: Path, timeout: float = 15.0) -> int:
    return wait_for(lambda: path.exists() and path.read_text().strip() and int(path.read_text()), timeout,
                    f"{path} to hold a pid")
