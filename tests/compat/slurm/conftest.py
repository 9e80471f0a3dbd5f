"""A live cluster per test module, and the Slurm front-ends on PATH as a site would put them.

The programs run as separate processes, as workflow tools run them; jobs inherit the PATH, so
``srun`` inside a job is the front-end too."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from xce.cluster import LocalCluster
from xce.compat.programs import SLURM

FAST = {"round_interval": 0.05, "report_interval": 0.5}


@dataclass
class Result:
    code: int
    out: str
    err: str


class Slurm:
    """Runs ``sbatch``, ``squeue`` ... against one cluster, from a working directory of its own."""

    def __init__(self, cluster: LocalCluster, bin_dir: Path, work: Path) -> None:
        self.cluster, self.bin, self.work = cluster, bin_dir, work
        self.env = {**cluster.env(), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        for k in [k for k in self.env if k.startswith("SLURM_")]:
            del self.env[k]

    def __call__(self, prog: str, *args: str, input: str | bytes | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None, timeout: float = 60) -> Result:
        data = input.encode() if isinstance(input, str) else (input if input is not None else b"")
        p = subprocess.run([str(self.bin / prog), *args], input=data, capture_output=True, timeout=timeout,
                           cwd=cwd or self.work, env={**self.env, **(env or {})})
        return Result(p.returncode, p.stdout.decode(), p.stderr.decode())

    def api(self):
        from xce.cli.client import connect

        saved = os.environ.get("XCE_STATE_DIR")
        os.environ["XCE_STATE_DIR"] = str(self.cluster.state_dir)
        try:
            return connect()
        finally:
            if saved is None:
                del os.environ["XCE_STATE_DIR"]
            else:
                os.environ["XCE_STATE_DIR"] = saved

    def job(self, ref: str) -> dict:
        c = self.api()
        try:
            return c.get("/v1/jobs", job=ref, all="true")["jobs"][0]
        finally:
            c.close()

    def detail(self, jobid: int) -> dict:
        c = self.api()
        try:
            return c.get(f"/v1/jobs/{jobid}")
        finally:
            c.close()

    def wait_state(self, ref: str, states: tuple[str, ...], timeout: float = 60) -> dict:
        from xce.testing.wait import wait_for

        return wait_for(lambda: (j := self.job(ref))["state"] in states and j, timeout,
                        lambda: f"job {ref} to reach {states} (now {self.job(ref)['state']})")


def write_launchers(directory: Path) -> None:
    """One executable per program, run by this interpreter (what ``xce compat install`` puts in place)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in SLURM:
        path = directory / name
        path.write_text(f"#!{sys.executable}\nimport sys\nfrom xce.compat.slurm.{name} import main\n"
                        "sys.exit(main(sys.argv[1:]))\n")
        path.chmod(0o755)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm")
    write_launchers(base / "bin")
    (base / "work").mkdir()
    cluster = LocalCluster(base / "state", 2, 2, **FAST)
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("XCE_FAKE_GPUS", "2")  # GPU requests need GPUs: Slurm refuses them on a cluster without
            cluster.start()
        yield Slurm(cluster, base / "bin", base / "work")
    finally:
        cluster.stop()
