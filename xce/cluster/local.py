"""A complete cluster on 127.0.0.1: controller, scheduler and N workers as background processes.

``xce up``, the end-to-end tests and the benchmarks all start clusters through this class, so they
exercise the same processes a site runs, started the same way (``python -m ...``), just on loopback.
Every process gets its own session (a Ctrl-C in the terminal that ran ``xce up`` stops none of them)
and a log file under ``<state-dir>/logs/``. The pids go into ``<state-dir>/cluster.json`` so that
``xce down`` in another shell can stop exactly these processes and nothing else.

Start order matters: the workers register before the scheduler starts, so the scheduler's first
full sync already holds every host, and :meth:`LocalCluster.start` returns only once the scheduler
has read the whole event log: from then on a submitted job is scheduled at the next round.
"""

from __future__ import annotations

import getpass
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from xce.controller import statedir

CLUSTER_FILE = "cluster.json"


class ClusterError(RuntimeError):
    """The cluster did not come up; the message names the process and its log."""


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


class LocalCluster:
    def __init__(self, state_dir: str | os.PathLike[str], workers: int = 2, slots: int | None = None, *,
                 config: str | os.PathLike[str] | None = None, port: int = 0, round_interval: float = 0.2,
                 report_interval: float = 2.0, worker_timeout: float = 30.0, host_prefix: str | None = None,
                 work_dir: str | None = None, python: str = sys.executable, start_timeout: float = 60.0,
                 log_level: str = "WARNING", run_as_self: bool = True) -> None:
        self.state_dir = statedir.ensure(Path(state_dir).expanduser().absolute())
        self.nworkers = workers
        self.slots = slots
        self.config = Path(config).absolute() if config else None
        self.port = port
        self.round_interval = round_interval
        self.report_interval = report_interval
        self.worker_timeout = worker_timeout
        self.host_prefix = host_prefix or socket.gethostname().split(".")[0]
        self.work_dir = work_dir
        self.python = python
        self.start_timeout = start_timeout
        self.log_level = log_level
        #: A personal cluster runs every job as the user who started it; False makes a root worker run
        #: each job as its owner, as on a real cluster.
        self.run_as_self = run_as_self
        self.log_dir = self.state_dir / "logs"
        self.procs: dict[str, subprocess.Popen] = {}
        self.url: str | None = None

    # -- names and tokens ------------------------------------------------------------------
    @property
    def worker_names(self) -> list[str]:
        return [f"{self.host_prefix}-w{i}" for i in range(1, self.nworkers + 1)]

    def token(self, role: str = "admin") -> str:
        return statedir.token_path(self.state_dir, role).read_text().strip()

    def env(self) -> dict[str, str]:
        """An environment for CLI commands against this cluster."""
        env = dict(os.environ)
        env.pop("XCE_URL", None)
        env.pop("XCE_TOKEN", None)
        env["XCE_STATE_DIR"] = str(self.state_dir)
        return env

    # -- processes -------------------------------------------------------------------------
    def _spawn(self, key: str, args: list[str]) -> subprocess.Popen:
        self.log_dir.mkdir(exist_ok=True)
        log = open(self.log_dir / f"{key}.log", "ab")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for k in ("XCE_URL", "XCE_TOKEN", "XCE_STATE_DIR"):
            env.pop(k, None)
        try:
            proc = subprocess.Popen([self.python, "-m", *args], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True, env=env, cwd=str(self.state_dir))
        finally:
            log.close()
        self.procs[key] = proc
        return proc

    def _fail(self, key: str, what: str) -> None:
        tail = ""
        try:
            tail = (self.log_dir / f"{key}.log").read_text()[-2000:]
        except OSError:
            pass
        self.stop()
        raise ClusterError(f"{what}; see {self.log_dir / (key + '.log')}:\n{tail}")

    def _wait(self, what: str, keys: list[str], check, timeout: float | None = None) -> Any:
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while True:
            for key in keys:
                p = self.procs[key]
                if p.poll() is not None:
                    self._fail(key, f"{key} exited with status {p.returncode} while waiting for {what}")
            result = check()
            if result:
                return result
            if time.monotonic() > deadline:
                self._fail(keys[0], f"timed out waiting for {what}")
            time.sleep(0.05)

    def start(self) -> "LocalCluster":
        statedir.info_path(self.state_dir).unlink(missing_ok=True)
        args = ["xce.cli.main", "controller", "--state-dir", str(self.state_dir), "--port", str(self.port),
                "--worker-timeout", str(self.worker_timeout), "--log-level", self.log_level]
        if self.config:
            args += ["--config", str(self.config)]
        if self.run_as_self:
            args += ["--single-user", getpass.getuser()]
        ctl = self._spawn("controller", args)

        def info():
            i = statedir.read_info(self.state_dir)
            return i if i and i.get("pid") == ctl.pid else None

        self.url = self._wait("the controller to listen", ["controller"], info)["url"]
        self._write_user_token()
        for name in self.worker_names:
            self.start_worker(name)
        self._wait(f"{self.nworkers} worker(s) to register", ["controller", *self.worker_names],
                   lambda: self._registered() >= set(self.worker_names))
        self._spawn("scheduler", ["xce.scheduler.normal_driver", "--state-dir", str(self.state_dir),
                                  "--round-interval", str(self.round_interval)])
        self._write_cluster_file()
        self._wait("the scheduler to read the event log", ["controller", "scheduler"], self._scheduler_synced)
        return self

    def start_worker(self, name: str) -> subprocess.Popen:
        """Start (or restart, after :meth:`kill`) one worker; a restarted one adopts its running jobs."""
        wargs = ["xce.worker.agent", "--name", name, "--state-dir", str(self.state_dir),
                 "--report-interval", str(self.report_interval), "--stop-jobs-on-exit", "--log-level", self.log_level]
        if self.run_as_self:
            wargs += ["--run-as-self"]
        if self.slots is not None:
            wargs += ["--slots", str(self.slots)]
        if self.work_dir:
            wargs += ["--work-dir", self.work_dir]
        return self._spawn(name, wargs)

    def _write_user_token(self) -> None:
        """The CLI reads ``<state-dir>/token`` first: make it this user's own token, so jobs are theirs.

        A token left by an earlier start is kept while it still works for this user."""
        import httpx

        path = self.state_dir / "token"
        me = getpass.getuser()
        try:
            old = path.read_text().strip()
            r = httpx.get(self.url + "/v1/whoami", headers={"Authorization": f"Bearer {old}"}, timeout=30.0,
                          verify=self._verify())
            if r.status_code == 200 and r.json().get("name") == me:
                return
        except (OSError, httpx.HTTPError, ValueError):
            pass
        issued = self.request("POST", "/v1/admin/tokens", {"name": me, "role": "user",
                                                           "note": f"xce up: {me}'s own token ({path})"})
        statedir.write_private(path, issued["token"] + "\n")

    def _write_cluster_file(self) -> None:
        data = {"url": self.url, "state_dir": str(self.state_dir), "started": time.time_ns(),
                "pids": {k: p.pid for k, p in self.procs.items()}}
        tmp = self.state_dir / (CLUSTER_FILE + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, self.state_dir / CLUSTER_FILE)

    # -- talking to it ---------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, role: str = "admin", **params: Any) -> Any:
        import httpx

        r = httpx.request(method, self.url + path, json=body, params=params or None, timeout=30.0,
                          headers={"Authorization": f"Bearer {self.token(role)}"}, verify=self._verify())
        r.raise_for_status()
        return r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text

    def _verify(self) -> Any:
        if not (self.url or "").startswith("https"):
            return True
        return statedir.client_ssl_context(statedir.ca_file(self.state_dir))

    def hosts(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/hosts")["hosts"]

    def _registered(self) -> set[str]:
        try:
            return {h["name"] for h in self.hosts() if h["status"] == "ok"}
        except Exception:
            return set()

    def _scheduler_synced(self) -> bool:
        try:
            text = self.request("GET", "/metrics")
        except Exception:
            return False
        for line in str(text).splitlines():
            if line.startswith("xce_event_log_lag "):
                return float(line.split()[1]) == 0
        return False

    # -- faults and stopping ---------------------------------------------------------------
    def kill(self, key: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one of the cluster's processes (``controller``, ``scheduler``, a worker name)."""
        p = self.procs[key]
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGKILL:
            p.wait(timeout=10)

    def stop(self, timeout: float = 15.0) -> list[int]:
        """Stop the scheduler and workers, then the controller; returns the pids that had to be killed."""
        order = ["scheduler", *[k for k in self.procs if k not in ("scheduler", "controller")], "controller"]
        order = [k for k in order if k in self.procs]
        killed = stop_pids([self.procs[k].pid for k in order if k != "controller"], timeout,
                           reap=[self.procs[k] for k in order if k != "controller"])
        if "controller" in self.procs:
            killed += stop_pids([self.procs["controller"].pid], timeout, reap=[self.procs["controller"]])
        (self.state_dir / CLUSTER_FILE).unlink(missing_ok=True)
        return killed

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def stop_pids(pids: list[int], timeout: float, reap: list[subprocess.Popen] | None = None) -> list[int]:
    """SIGTERM, wait up to ``timeout``, then SIGKILL; returns the pids that needed SIGKILL."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        for p in reap or []:
            p.poll()
        waiting = [p for p in waiting if pid_alive(p)]
        if waiting:
            time.sleep(0.05)
    for pid in waiting:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for p in reap or []:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    return waiting


def read_cluster_file(state_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((state_dir / CLUSTER_FILE).read_text())
    except (OSError, ValueError):
        return None


def down(state_dir: Path, timeout: float = 15.0) -> tuple[dict[str, int], list[int]]:
    """Stop the cluster recorded in ``<state-dir>/cluster.json`` (from another process than ``up``)."""
    data = read_cluster_file(state_dir)
    if data is None:
        raise ClusterError(f"no cluster recorded in {state_dir / CLUSTER_FILE} (was it started with `xce up`?)")
    pids: dict[str, int] = data.get("pids", {})
    others = [pid for k, pid in pids.items() if k != "controller"]
    killed = stop_pids(others, timeout)
    if "controller" in pids:
        killed += stop_pids([pids["controller"]], timeout)
    (state_dir / CLUSTER_FILE).unlink(missing_ok=True)
    return pids, killed
