"""A live cluster for the LSF programs' tests, and a way to run a program as its launcher does.

A module of its own rather than a ``conftest.py``: other directories' tests import their conftest
by the bare name ``conftest``, which a second one collected in the same run would shadow."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from xce.cluster import LocalCluster
from xce.testing.wait import wait_for  # noqa: F401  (tests import it from here)

CONFIG = """
cluster_name = "lsftest"
default_queue = "normal"

[queues.normal]
priority = 30

[queues.short]
priority = 40
"""

#: What ``xce compat install`` writes for each program, in one line: ``main(argv)``'s status is the exit status.
LAUNCH = ("import sys; from importlib import import_module; "
          "sys.exit(import_module('xce.compat.lsf.' + sys.argv[1]).main(sys.argv[2:]))")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


class Lsf:
    """Runs ``bsub``, ``bjobs`` ... against one cluster, as a user in ``cwd`` would."""

    def __init__(self, cluster: LocalCluster, cwd: Path) -> None:
        self.cluster = cluster
        self.cwd = cwd
        lsf_settings = ("XCE_LSF_UNIT_FOR_LIMITS", "LSF_UNIT_FOR_LIMITS", "LSF_ENVDIR", "LSF_CONFDIR", "LSB_SHAREDIR")
        self.env = {k: v for k, v in cluster.env().items() if k not in lsf_settings}

    def __call__(self, prog: str, *args: str, input: str = "", env: dict[str, str] | None = None,
                 timeout: float = 60) -> Result:
        p = subprocess.run([sys.executable, "-c", LAUNCH, prog, *args], input=input, capture_output=True, text=True,
                           env={**self.env, **(env or {})}, cwd=self.cwd, timeout=timeout)
        return Result(p.returncode, p.stdout, p.stderr)

    def submit(self, *args: str, input: str = "") -> int:
        r = self("bsub", *args, input=input)
        assert r.code == 0, r.err
        return int(r.out.split("<")[1].split(">")[0])

    def job(self, jobid: int) -> dict:
        return self.cluster.request("GET", f"/v1/jobs/{jobid}")

    def wait_state(self, jobid: int, *states: str, timeout: float = 40) -> dict:
        return wait_for(lambda: (j := self.job(jobid))["state"] in states and j, timeout,
                        lambda: f"job {jobid} to reach {states} (now {self.job(jobid)['state']})")


def start_cluster(base: Path) -> LocalCluster:
    config = base / "xce.toml"
    config.write_text(CONFIG)
    cluster = LocalCluster(base / "state", 1, 2, config=config, round_interval=0.05, report_interval=0.5)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster
