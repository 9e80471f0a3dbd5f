"""Starting a controller as a child process and waiting until it serves (for ``xce up`` and tests).

A controller started with ``--port 0`` reports where it listens only through
``<state-dir>/controller.json``; this waits for that file to name the *new* process (a file left by
a killed predecessor names another pid) and then returns a handle with its URL and the service
tokens it wrote. Standard library only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from xce.client import statedir


class LaunchError(RuntimeError):
    pass


@dataclass
class ControllerProcess:
    proc: subprocess.Popen
    state_dir: Path
    url: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def token(self, role: str = "admin") -> str:
        return statedir.token_path(self.state_dir, role).read_text().strip()

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL if it does not exit in time; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill9(self) -> None:
        """The crash: no shutdown code runs."""
        self.proc.kill()
        self.proc.wait()

    def log(self) -> str:
        try:
            return self.log_path.read_text()
        except OSError:
            return ""


def start_controller(state_dir: str | os.PathLike[str], *, db: str | None = None, config: str | None = None,
                     extra_args: tuple[str, ...] = (), timeout: float = 30.0,
                     env: dict[str, str] | None = None) -> ControllerProcess:
    sd = Path(state_dir)
    statedir.ensure(sd)
    args = [sys.executable, "-m", "xce.cli.main", "controller", "--state-dir", str(sd), "--port", "0"]
    if db:
        args += ["--db", db]
    if config:
        args += ["--config", str(config)]
    args += list(extra_args)
    log_path = sd / "controller.log"
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})})
    finally:
        log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = statedir.read_info(sd)
        if info and info.get("pid") == proc.pid:
            return ControllerProcess(proc, sd, info["url"], log_path)
        if proc.poll() is not None:
            raise LaunchError(f"controller exited with status {proc.returncode}:\n{log_path.read_text()}")
        time.sleep(0.02)
    proc.kill()
    raise LaunchError(f"controller did not start within {timeout}s:\n{log_path.read_text()}")
