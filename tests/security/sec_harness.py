"""What the security tests share: real Unix users, directories they can reach, running as them, munged.

Everything made here has a random name (``xts<hex>``) and is removed afterwards, also when a test
fails: other helpers run tests on the same machine at the same time.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from xce.cluster import LocalCluster

ROOT = os.getuid() == 0


def need_root() -> None:
    if not ROOT:
        pytest.fail("the multi-user tests need root (useradd, a root worker); run the suite as root", pytrace=False)


@dataclass(frozen=True)
class UnixUser:
    name: str
    uid: int
    gid: int
    home: Path


@contextlib.contextmanager
def unix_users(n: int, base: Path) -> Iterator[list[UnixUser]]:
    """``n`` new local users with homes under ``base`` (0700, their own); deleted on exit."""
    need_root()
    made: list[str] = []
    try:
        users = []
        for _ in range(n):
            name = f"xts{secrets.token_hex(4)}"
            home = base / name
            subprocess.run(["useradd", "-M", "-U", "-d", str(home), "-s", "/bin/sh", name], check=True,
                           capture_output=True)
            made.append(name)
            pw = pwd.getpwnam(name)
            home.mkdir(mode=0o700)
            os.chown(home, pw.pw_uid, pw.pw_gid)
            users.append(UnixUser(name, pw.pw_uid, pw.pw_gid, home))
        yield users
    finally:
        for name in made:
            subprocess.run(["userdel", "-f", name], capture_output=True)


@contextlib.contextmanager
def reachable_dir() -> Iterator[Path]:
    """A 0755 directory in /tmp (pytest's own tmp dirs are 0700, so other users cannot reach them)."""
    path = Path(tempfile.mkdtemp(prefix="xts"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: Imported before the switch to the user: the interpreter of this machine lives under /root (0700),
#: so modules not yet loaded could not be read any more once the process is the user.
_PRELOAD = ("xce.cli.main", "xce.cli.client", "xce.client.transport", "xce.cli.submit", "xce.cli.jobs",
            "xce.cli.jobctl", "xce.cli.spec", "xce.cli.admin", "xce.munge", "xce.client.follow",
            "xce.client.statedir", "http.client", "json", "ssl", "ctypes", "encodings.idna", "urllib.parse",
            "email.parser", "email.feedparser", "shlex", "xce.cli.up", "pydantic", "decimal", "importlib.metadata",
            "xce.plugins", "xce.cli.jobscript", "xce.cli.directives", "xce.compat.slurm.options", "xce.compat.lsf.options", "xce.cli.envcopy", "xce.cli.placement", "xce.jobfiles",
            "xce.core.quantity", "xce.mail", "xce.mail.asked")


def run_as(user: UnixUser, args: list[str], *, env: dict[str, str], cwd: Path, prog: str = "xce",
           timeout: float = 60, stdin: str = "") -> subprocess.CompletedProcess:
    """``xce ARGS`` (or ``xceadmin``) as ``user``: all its ids and groups, from before it reads anything."""
    main = {"xce": "xce.cli.main", "xceadmin": "xce.cli.admin"}[prog]
    prelude = (
        "import importlib, os, sys\n"
        f"for m in {_PRELOAD!r}:\n"
        "    try: importlib.import_module(m)\n"
        "    except ImportError: pass\n"
        f"os.setgroups(os.getgrouplist({user.name!r}, {user.gid})); os.setgid({user.gid}); os.setuid({user.uid})\n"
        f"os.chdir({str(cwd)!r})\n"
        f"sys.argv[0] = {prog!r}\n"
        f"from {main} import main; main()\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    full = {**clean, "HOME": str(user.home), "USER": user.name, "LOGNAME": user.name, **env}
    return subprocess.run([sys.executable, "-c", prelude, *args], env=full, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


class Munged:
    """A private ``munged`` (its own key, socket, pid, log and seed files) for one test module."""

    def __init__(self, base: Path, key: bytes | None = None) -> None:
        self.dir = base
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o755)
        self.key = self.dir / "munge.key"
        self.socket = self.dir / "munge.socket"
        self.proc: subprocess.Popen | None = None
        if key is None:
            subprocess.run(["mungekey", "-c", "-k", str(self.key), "-b", "1024"], check=True, capture_output=True)
        else:
            fd = os.open(self.key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, key)
            os.close(fd)

    def start(self) -> "Munged":
        log = open(self.dir / "munged.out", "ab")
        self.proc = subprocess.Popen(
            ["munged", "-F", f"--key-file={self.key}", f"--socket={self.socket}",
             f"--pid-file={self.dir / 'munged.pid'}", f"--log-file={self.dir / 'munged.log'}",
             f"--seed-file={self.dir / 'munged.seed'}", "--num-threads=2"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 20
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                out = (self.dir / "munged.out").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"munged did not start: {out}")
            time.sleep(0.02)
        return self

    def encode(self, payload: bytes = b"", ttl: int | None = None) -> str:
        args = ["munge", "-S", str(self.socket), "-s", payload.decode()]
        if ttl is not None:
            args += ["-t", str(ttl)]
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def make_tls(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1/localhost signed by it: (ca, cert, key)."""
    d = directory
    run = lambda *a: subprocess.run(list(a), check=True, capture_output=True, cwd=d)  # noqa: E731
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=xce test CA")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    return d / "ca.pem", d / "server.pem", d / "server.key"


class Site:
    """The cluster, its users and what they hold."""

    def __init__(self, cluster: LocalCluster, users, munged: Munged, base: Path) -> None:
        self.cluster = cluster
        self.alice, self.bob = users
        self.munged = munged
        self.base = base
        self.tokens: dict[str, str] = {}
        self.clients: dict[str, httpx.Client] = {}

    def token(self, name: str, **extra) -> str:
        r = self.cluster.request("POST", "/v1/admin/tokens", {"name": name, **extra})
        return r["token"]

    def as_(self, user) -> httpx.Client:
        if user.name not in self.clients:
            self.tokens[user.name] = self.token(user.name)
            self.clients[user.name] = httpx.Client(base_url=self.cluster.url, timeout=30,
                                                   headers={"Authorization": f"Bearer {self.tokens[user.name]}"})
        return self.clients[user.name]

    def submit(self, user, command: list[str], **fields) -> int:
        body = {"command": command, "cwd": str(user.home), **fields}
        r = self.as_(user).post("/v1/jobs", json=body)
        assert r.status_code == 201, r.text
        return r.json()["jobid"]

    def job(self, jobid: int) -> dict:
        return self.cluster.request("GET", f"/v1/jobs/{jobid}")

    def wait(self, jobid: int, states: tuple[str, ...] = ("DONE", "EXIT"), timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(jobid)
            if job["state"] in states:
                return job
            assert time.monotonic() < deadline, f"job {jobid} is {job['state']} ({job['reason']}), not {states}"
            time.sleep(0.1)
