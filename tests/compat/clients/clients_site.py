"""A site as a workflow tool meets it: a live XCE cluster, the LSF and Slurm front-ends installed by
``xce compat install`` first on PATH, LSF's files written by ``xce compat lsf-conf``, and nothing else
(no real LSF or Slurm on this machine). The clients run unchanged in this environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from xce.cluster import LocalCluster

XCE = [sys.executable, "-m", "xce.cli.main"]
#: Short intervals keep the tests fast without changing what a client sees.
FAST = {"round_interval": 0.05, "report_interval": 0.5}


class Site:
    def __init__(self, base: Path, workers: int = 2, slots: int = 4) -> None:
        self.base = base
        self.work = base / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.cluster = LocalCluster(base / "state", workers, slots, **FAST)
        self.bin = base / "compat-bin"
        self.env: dict[str, str] = {}

    def start(self) -> "Site":
        self.cluster.start()
        env = {k: v for k, v in self.cluster.env().items()
               if not k.startswith(("LSF_", "LSB_", "SLURM_", "SBATCH_", "SQUEUE_", "SACCT_"))}
        # The clients run as this user (root): launchers only it runs.
        r = subprocess.run([*XCE, "compat", "install", "--only-me", str(self.bin)], env=env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([*XCE, "compat", "lsf-conf", str(self.base / "lsf")], env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        for line in r.stdout.splitlines():
            if line.startswith("export "):
                key, _, value = line.removeprefix("export ").partition("=")
                env[key] = value
        # The front-ends first; then this interpreter's bin, where a site's users find python and the
        # clients' own programs (dask-worker, snakemake).
        env["PATH"] = os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), env.get("PATH", "")])
        self.env = env
        return self

    def stop(self) -> None:
        self.cluster.stop()

    def run(self, *argv: str, cwd: Path | None = None, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        """A command as a user of the site types it (``bjobs -a``, ``sacct -j 5``)."""
        return subprocess.run(list(argv), env=self.env, cwd=cwd or self.work, capture_output=True, text=True,
                              timeout=timeout, **kw)

    def jobs(self) -> list[dict]:
        """Every job XCE holds, in XCE's own words (the check of what a client did, independent of the
        front-ends' translation)."""
        r = subprocess.run([*XCE, "jobs", "-a", "-u", "all", "--json"], env=self.env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["jobs"]

    def job(self, jobid) -> dict:
        """One job in full (request, limits, history), in XCE's own words."""
        r = subprocess.run([*XCE, "jobs", "-l", "--json", str(jobid)], env=self.env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["jobs"][0]

    def logs(self) -> str:
        """The cluster's logs, for a failure message."""
        out = []
        for p in sorted((self.cluster.state_dir / "logs").glob("*.log")):
            out.append(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}")
        return "\n".join(out)
