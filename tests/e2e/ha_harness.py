"""Driving a cluster the way an administrator does: ``xce up`` / ``xce down`` / ``xceadmin`` as commands,
the leader found through ``GET /v1/status``, and what is left of a state directory's processes."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from xce.testing.wait import wait_for  # noqa: F401  (tests import it from here)


class UpCluster:
    """A cluster started by ``xce up`` in ``<base>/state`` for a user whose HOME is ``base``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.state = base / "state"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
        self.env["HOME"] = str(base)
        self.user_env = dict(self.env, XCE_STATE_DIR=str(self.state))

    def run(self, module: str, *args: str, env: dict[str, str] | None = None,
            timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", module, *args], env=env or self.user_env, cwd=self.base,
                              capture_output=True, text=True, timeout=timeout)

    def xce(self, *args: str, **kw: Any) -> subprocess.CompletedProcess:
        return self.run("xce.cli.main", *args, **kw)

    def xceadmin(self, *args: str, **kw: Any) -> subprocess.CompletedProcess:
        return self.run("xce.cli.admin", *args, **kw)

    def up(self, *args: str) -> subprocess.CompletedProcess:
        r = self.xce("up", "--state-dir", str(self.state), *args, env=self.env)
        assert r.returncode == 0, r.stdout + r.stderr
        return r

    def down(self) -> subprocess.CompletedProcess:
        return self.xce("down", "--state-dir", str(self.state), env=self.env)

    def file(self) -> dict[str, Any]:
        return json.loads((self.state / "cluster.json").read_text())

    @property
    def urls(self) -> list[str]:
        return self.file()["urls"]

    def token(self, role: str = "admin") -> str:
        return (self.state / "tokens" / role).read_text().strip()

    def statuses(self) -> dict[str, dict[str, Any]]:
        out = {}
        for url in self.urls:
            try:
                out[url] = httpx.get(url + "/v1/status", timeout=3,
                                     headers={"Authorization": f"Bearer {self.token()}"}).json()
            except (httpx.HTTPError, ValueError):
                pass
        return out

    def leader(self) -> tuple[str, dict[str, Any]] | None:
        for url, st in self.statuses().items():
            if st["controller"]["role"] == "leader":
                return url, st
        return None

    def log(self, name: str) -> str:
        try:
            return (self.state / "logs" / f"{name}.log").read_text()
        except OSError:
            return ""

    def leftovers(self) -> list[str]:
        return processes_of(self.state)


def processes_of(state_dir: Path) -> list[str]:
    """Command lines of the live processes that name ``state_dir`` (or a path below it)."""
    sd = str(state_dir).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        if any(a == sd or a.startswith(sd + b"/") for a in args):
            found.append(f"{entry}: {b' '.join(args).decode(errors='replace')}")
    return found




def percentiles(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(statistics.median(values), 3), "max": round(max(values), 3)}
