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
from xce.client.patience import Patience


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

    def user_token(self, name: str = "alice", admin: bool = False) -> str:
        """A person's token (an administrator's with ``admin``), issued with the admin service token:
        what submits jobs to a multi-user controller, where the service token speaks for root
        (refused unless ``allow_root_jobs``)."""
        import json
        import urllib.request

        req = urllib.request.Request(f"{self.url}/v1/admin/users", data=json.dumps({"name": name, "admin": admin}).encode(),
                                     headers={"Authorization": f"Bearer {self.token('admin')}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as answer:
            return json.load(answer)["token"]

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
    patience = Patience(timeout)
    while not patience.expired():
        info = statedir.read_info(sd)
        if info and info.get("pid") == proc.pid:
            return ControllerProcess(proc, sd, info["url"], log_path)
        if proc.poll() is not None:
            raise LaunchError(f"controller exited with status {proc.returncode}:\n{log_tail(log_path)}")
        time.sleep(0.02)
    where = process_state(proc.pid)
    proc.kill()
    raise LaunchError(f"controller did not start within {patience.describe()}; it was {where}:\n{log_tail(log_path)}")


def log_tail(path: Path, lines: int = 40) -> str:
    """The end of a log, or a line saying there is nothing in it (an empty log says the process
    never got as far as logging, which is worth reading too)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log at {path}: {exc.strerror})"
    return "\n".join(text.splitlines()[-lines:]) if text.strip() else f"(the log {path} is empty)"


def process_state(pid: int) -> str:
    """``running (state R, 0.41 s of CPU)`` from /proc, for a wait that gave up on a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return "gone"
    cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return f"running (state {fields[0]}, {cpu_s:.2f} s of CPU)"
