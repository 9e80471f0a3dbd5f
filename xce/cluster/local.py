"""A complete cluster on 127.0.0.1: controller(s), scheduler and N workers as background processes.

``xce up``, the end-to-end tests and the benchmarks all start clusters through this class, so they
exercise the same processes a site runs, started the same way (``python -m ...``), just on loopback.
Every process gets its own session (a Ctrl-C in the terminal that ran ``xce up`` stops none of them)
and a log file under ``<state-dir>/logs/``. The pids go into ``<state-dir>/cluster.json`` so that
``xce down`` in another shell can stop exactly these processes and nothing else; :meth:`supervise`
(run by ``xce up``'s supervisor, :mod:`xce.cluster.supervisor`) restarts any that dies and rewrites
the file, so ``xce down`` also knows the restarted ones.

Several controllers (``controllers=N``) need a shared PostgreSQL database (``db``): each gets its own
state directory ``<state-dir>/controllers/controller-K``; tokens live in the database, so every
controller accepts the service tokens the first one issued (copied into ``<state-dir>/tokens``), and
``<state-dir>/controller.json`` lists all their addresses, which the CLI, the workers and the
scheduler follow to the leader. A controller keeps
its port across restarts, so those addresses stay valid.

Start order matters: the workers register before the scheduler starts, so the scheduler's first
full sync already holds every host, and :meth:`LocalCluster.start` returns only once the scheduler
has read the whole event log: from then on a submitted job is scheduled at the next round.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from xce.client import follow, statedir
from xce.client.patience import Patience
from xce.procs import pid_alive

CLUSTER_FILE = "cluster.json"
log = logging.getLogger("xce.cluster")

#: Restart back-off: a process that ran at least MIN_UPTIME_S is restarted after RESTART_DELAY_S; one
#: that died sooner (a crash loop: bad configuration, a port taken) waits twice as long each time, up
#: to MAX_RESTART_DELAY_S.
RESTART_DELAY_S = 0.5
MIN_UPTIME_S = 3.0
MAX_RESTART_DELAY_S = 30.0


def is_postgres(db: str | None) -> bool:
    return bool(db) and db.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


class ClusterError(RuntimeError):
    """The cluster did not come up; the message names the process and its log."""


class LocalCluster:
    def __init__(self, state_dir: str | os.PathLike[str], workers: int = 2, slots: int | None = None, *,
                 config: str | os.PathLike[str] | None = None, port: int = 0, round_interval: float | None = None,
                 report_interval: float = 2.0, worker_timeout: float = 30.0, host_prefix: str | None = None,
                 work_dir: str | None = None, python: str = sys.executable, start_timeout: float = 60.0,
                 log_level: str = "WARNING", run_as_self: bool = True, db: str | None = None, controllers: int = 1,
                 log_format: str | None = None, lease_timeout: float | None = None,
                 supervisor_pid: int | None = None) -> None:
        if controllers < 1:
            raise ClusterError("there must be at least one controller")
        if controllers > 1 and not is_postgres(db):
            raise ClusterError("several controllers need one PostgreSQL database they share: pass "
                               "--db postgresql://USER@HOST:PORT/DB")
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
        self.db = db
        self.ncontrollers = controllers
        self.log_format = log_format
        self.lease_timeout = lease_timeout
        #: The pid of the process that restarts this cluster's processes (``xce up``), for ``xce down``.
        self.supervisor_pid = supervisor_pid
        self.log_dir = self.state_dir / "logs"
        self.procs: dict[str, subprocess.Popen] = {}
        self.args: dict[str, list[str]] = {}
        self.started: dict[str, float] = {}
        self.restarts: dict[str, int] = {}
        self.url: str | None = None
        self.urls: list[str] = []

    # -- names and tokens ------------------------------------------------------------------
    @property
    def cgroup_parent(self) -> str:
        """Workers of local clusters share a host name, so each cluster's control groups get their own
        parent: two clusters on one machine never remove each other's jobs' groups."""
        import hashlib

        return "xce-local-" + hashlib.sha1(str(self.state_dir).encode()).hexdigest()[:10]

    @property
    def spool_root(self) -> Path:
        """A multi-user cluster's spooled job scripts: where every job's owner can reach its own
        (``/var/spool/xce``, as a real worker keeps them), one directory per cluster on this machine."""
        return Path("/var/spool/xce") / self.cgroup_parent

    @property
    def worker_names(self) -> list[str]:
        return [f"{self.host_prefix}-w{i}" for i in range(1, self.nworkers + 1)]

    @property
    def controller_keys(self) -> list[str]:
        if self.ncontrollers == 1:
            return ["controller"]
        return [f"controller-{i}" for i in range(1, self.ncontrollers + 1)]

    def controller_state_dir(self, key: str) -> Path:
        return self.state_dir if self.ncontrollers == 1 else self.state_dir / "controllers" / key

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
        for k in ("XCE_URL", "XCE_TOKEN", "XCE_STATE_DIR", "XCE_DB"):
            env.pop(k, None)
        if self.db and key in self.controller_keys:
            env["XCE_DB"] = self.db  # not on the command line, where `ps` would show a password
        try:
            proc = subprocess.Popen(self._argv(key, args), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True, env=env, cwd=str(self.state_dir))
        finally:
            log.close()
        self.procs[key] = proc
        self.args[key] = list(args)
        self.started[key] = time.monotonic()
        return proc

    def _argv(self, key: str, args: list[str]) -> list[str]:
        """The command line of process ``key``: where a subclass puts it elsewhere (the multi-host
        test bed runs each worker inside its own network namespace)."""
        return [self.python, "-m", *args]

    def _log_args(self, at_least: str | None = None) -> list[str]:
        level = self.log_level
        if at_least and logging.getLevelName(at_least.upper()) < logging.getLevelName(level.upper()):
            level = at_least
        return ["--log-level", level] + (["--log-format", self.log_format] if self.log_format else [])

    def _fail(self, key: str, what: str) -> None:
        tail = ""
        try:
            tail = (self.log_dir / f"{key}.log").read_text()[-2000:]
        except OSError:
            pass
        self.stop()
        raise ClusterError(f"{what}; see {self.log_dir / (key + '.log')}:\n{tail}")

    def _wait(self, what: str, keys: list[str], check, timeout: float | None = None) -> Any:
        patience = Patience(timeout or self.start_timeout)
        while True:
            for key in keys:
                p = self.procs[key]
                if p.poll() is not None:
                    self._fail(key, f"{key} exited with status {p.returncode} while waiting for {what}")
            result = check()
            if result:
                return result
            if patience.expired():
                self._fail(keys[0], f"timed out after {patience.describe()} waiting for {what}")
            time.sleep(0.05)

    def start(self) -> "LocalCluster":
        statedir.info_path(self.state_dir).unlink(missing_ok=True)
        for i, key in enumerate(self.controller_keys):
            self.urls.append(self._start_controller(key, self.port + i if self.port else 0))
        self.url = self.urls[0]
        if self.ncontrollers > 1:
            self._share_service_tokens()
            first = statedir.read_info(self.controller_state_dir(self.controller_keys[0])) or {}
            info = {"url": self.url, "urls": self.urls, "state_dir": str(self.state_dir), "started": time.time_ns()}
            if first.get("ca_file"):
                info["ca_file"] = first["ca_file"]
            statedir.write_info(self.state_dir, info)
        self._write_user_token()
        for name in self.worker_names:
            self.start_worker(name)
        self._wait(f"{self.nworkers} worker(s) to register", [*self.controller_keys, *self.worker_names],
                   lambda: self._registered() >= set(self.worker_names))
        self._spawn("scheduler", ["xce.cli.main", "scheduler", "--state-dir", str(self.state_dir),
                                  "--url", ",".join(self.urls),
                                  *(() if self.round_interval is None else ("--round-interval", str(self.round_interval))),
                                  *self._log_args(at_least="INFO")])  # its few INFO lines: syncs, recordings
        self._write_cluster_file()
        self._wait("the scheduler to read the event log", [*self.controller_keys, "scheduler"], self._scheduler_synced)
        return self

    def _share_service_tokens(self) -> None:
        """The first controller (the leader) issued the service tokens into its own state directory; the
        workers, the scheduler and the CLI read them from the cluster's. Tokens live in the database, so
        every controller accepts them."""
        first = self.controller_state_dir(self.controller_keys[0])
        for role in statedir.SERVICE_ROLES:
            statedir.write_private(statedir.token_path(self.state_dir, role),
                                   statedir.token_path(first, role).read_text())

    def _start_controller(self, key: str, port: int) -> str:
        csd = self.controller_state_dir(key)
        statedir.ensure(csd)
        statedir.info_path(csd).unlink(missing_ok=True)
        args = ["xce.cli.main", "controller", "--state-dir", str(csd), "--port", str(port),
                "--worker-timeout", str(self.worker_timeout), *self._log_args()]
        if self.config:
            args += ["--config", str(self.config)]
        if self.run_as_self:
            args += ["--single-user", getpass.getuser()]
        if self.lease_timeout:
            args += ["--lease-timeout", str(self.lease_timeout)]
        ctl = self._spawn(key, args)

        def info():
            i = statedir.read_info(csd)
            return i if i and i.get("pid") == ctl.pid else None

        url = self._wait(f"{key} to listen", [key], info)["url"]
        # A restart binds the same port: the addresses the others were given stay valid.
        self.args[key][self.args[key].index("--port") + 1] = url.rsplit(":", 1)[1]
        return url

    def start_worker(self, name: str) -> subprocess.Popen:
        """Start (or restart, after :meth:`kill`) one worker; a restarted one adopts its running jobs."""
        wargs = ["xce.cli.main", "worker", "--name", name, "--state-dir", str(self.state_dir),
                 "--url", ",".join(self.urls), "--report-interval", str(self.report_interval), "--stop-jobs-on-exit",
                 "--cgroup-parent", self.cgroup_parent, *self._log_args()]
        if self.run_as_self:
            wargs += ["--run-as-self"]
        else:
            wargs += ["--spool-dir", str(self.spool_root / name)]
            if self.config:  # root's jobs, where xce.toml accepts them, run as root on its own workers
                from xce.config.loader import load_config

                if load_config(self.config, check_plugins=False).allow_root_jobs:
                    wargs += ["--allow-root-jobs"]
        if self.slots is not None:
            wargs += ["--slots", str(self.slots)]
        if self.work_dir:
            wargs += ["--work-dir", self.work_dir]
        return self._spawn(name, wargs)

    def _write_user_token(self) -> None:
        """The CLI reads ``<state-dir>/token`` first: make it this user's own token, so jobs are theirs.

        A token left by an earlier start is kept while it still works for this user."""
        path = self.state_dir / "token"
        me = getpass.getuser()
        try:
            old = path.read_text().strip()
            with self.session(old) as http:
                r = http.get("/v1/whoami")
            if r.status_code == 200 and r.json().get("name") == me:
                return
        except (OSError, follow.Unreachable, ValueError):
            pass
        issued = self.request("POST", "/v1/admin/tokens", {"name": me, "role": "user",
                                                           "note": f"xce up: {me}'s own token ({path})"})
        statedir.write_private(path, issued["token"] + "\n")

    def _write_cluster_file(self) -> None:
        data = {"url": self.url, "urls": self.urls, "state_dir": str(self.state_dir), "started": time.time_ns(),
                "pids": {k: p.pid for k, p in self.procs.items()}, "restarts": dict(self.restarts)}
        if self.supervisor_pid:
            data["supervisor"] = self.supervisor_pid
        tmp = self.state_dir / (CLUSTER_FILE + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, self.state_dir / CLUSTER_FILE)

    # -- talking to it ---------------------------------------------------------------------
    def session(self, token: str, urls: list[str] | None = None, timeout: float = 30.0) -> follow.Session:
        """A client of this cluster's leader (of ``urls``, when given)."""
        ca = statedir.ca_file(self.state_dir) if (self.url or "").startswith("https") else None
        return follow.Session(urls or self.urls, token, timeout=timeout, ca_file=ca)

    def request(self, method: str, path: str, body: Any = None, role: str = "admin", **params: Any) -> Any:
        """One API call, to the leader."""
        with self.session(self.token(role)) as http:
            r = http.request(method, path, json=body, params=params or None)
        r.raise_for_status()
        return r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text

    def leader_status(self) -> dict[str, Any] | None:
        """``GET /v1/status`` of the controller that leads now, or None while none does."""
        for url in self.urls:
            try:
                # One address at a time: /v1/status is answered by followers too, each with its own role.
                with self.session(self.token("admin"), [url], timeout=5.0) as http:
                    r = http.get("/v1/status")
                st = r.json()
            except (follow.Unreachable, ValueError):
                continue
            if r.status_code == 200 and st.get("controller", {}).get("role") == "leader":
                return st
        return None

    def hosts(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/hosts")["hosts"]

    def _registered(self) -> set[str]:
        try:
            return {h["name"] for h in self.hosts() if h["status"] == "ok"}
        except Exception:
            return set()

    def _scheduler_synced(self) -> bool:
        st = self.leader_status()
        sched = (st or {}).get("scheduler") or {}
        return sched.get("last_request_age_s") is not None and sched.get("lag") == 0

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
        """Stop the scheduler and workers, then the controllers; returns the pids that had to be killed."""
        ctls = [k for k in self.controller_keys if k in self.procs]
        others = [k for k in ["scheduler", *self.procs] if k in self.procs and k not in ctls]
        others = list(dict.fromkeys(others))
        killed = stop_pids([self.procs[k].pid for k in others], timeout, reap=[self.procs[k] for k in others])
        self._purge_cgroups()
        if not self.run_as_self:
            shutil.rmtree(self.spool_root, ignore_errors=True)
        if ctls:
            killed += stop_pids([self.procs[k].pid for k in ctls], timeout, reap=[self.procs[k] for k in ctls])
        (self.state_dir / CLUSTER_FILE).unlink(missing_ok=True)
        if self.ncontrollers > 1:
            statedir.info_path(self.state_dir).unlink(missing_ok=True)
        return killed

    def _purge_cgroups(self) -> None:
        """The control groups of this cluster's workers go with it, with anything a killed worker
        left running in them."""
        from xce.worker.containment import ContainmentError, detect

        for name in self.worker_names:
            try:
                detect(name, parent=self.cgroup_parent).purge()
            except (ContainmentError, OSError):
                continue

    # -- supervision -----------------------------------------------------------------------
    def supervise(self, stop: threading.Event, poll: float = 0.1) -> None:
        """Restart every process of the cluster that exits, with back-off, until ``stop`` is set.

        Each restart is logged at WARNING with how the process ended and when it comes back, and
        ``cluster.json`` is rewritten with the new pid.
        """
        due: dict[str, float] = {}
        delay: dict[str, float] = {}
        while not stop.is_set():
            now = time.monotonic()
            for key, proc in list(self.procs.items()):
                if proc.poll() is None:
                    continue
                if key not in due:
                    uptime = now - self.started.get(key, now)
                    quick = uptime < MIN_UPTIME_S
                    delay[key] = min(MAX_RESTART_DELAY_S, delay.get(key, RESTART_DELAY_S) * 2) if quick \
                        else RESTART_DELAY_S
                    due[key] = now + delay[key]
                    log.warning("%s (pid %d) %s after %.1f s; restarting it in %.1f s%s", key, proc.pid,
                                _how(proc.returncode), uptime, delay[key],
                                " (it keeps dying early: see its log)" if quick else "",
                                extra={"fields": {"process": key, "pid": proc.pid, "status": proc.returncode,
                                                  "uptime_s": round(uptime, 1), "delay_s": delay[key]}})
                elif now >= due[key]:
                    del due[key]
                    new = self._spawn(key, self.args[key])
                    self.restarts[key] = self.restarts.get(key, 0) + 1
                    self._write_cluster_file()
                    log.warning("%s restarted (pid %d, restart %d)", key, new.pid, self.restarts[key],
                                extra={"fields": {"process": key, "pid": new.pid, "restarts": self.restarts[key]}})
            stop.wait(poll)

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


def _how(status: int | None) -> str:
    if status is None:
        return "is running"
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def read_cluster_file(state_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((state_dir / CLUSTER_FILE).read_text())
    except (OSError, ValueError):
        return None


def ours(pid: int, state_dir: Path) -> bool:
    """``pid`` is alive and one of this state directory's processes (not a stranger that reused the pid)."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return True  # no /proc: trust the file
    sd = str(state_dir).rstrip("/").encode()
    return any(a == sd or a.startswith(sd + b"/") for a in args)


def down(state_dir: Path, timeout: float = 15.0) -> tuple[dict[str, int], list[int]]:
    """Stop the cluster recorded in ``<state-dir>/cluster.json`` (from another process than ``up``).

    The supervisor, if any, is stopped first and stops its processes itself (it would otherwise
    restart them); then whatever the file names that still runs is stopped here, controllers last.
    """
    data = read_cluster_file(state_dir)
    if data is None:
        raise ClusterError(f"no cluster recorded in {state_dir / CLUSTER_FILE} (was it started with `xce up`?)")
    sup = data.get("supervisor")
    killed: list[int] = []
    if sup and ours(int(sup), state_dir):
        killed += stop_pids([int(sup)], timeout + 15.0)
        data = read_cluster_file(state_dir) or data  # it may have restarted something meanwhile
    pids: dict[str, int] = data.get("pids", {})
    ctls = [pid for k, pid in pids.items() if k.startswith("controller") and ours(pid, state_dir)]
    others = [pid for k, pid in pids.items() if not k.startswith("controller") and ours(pid, state_dir)]
    killed += stop_pids(others, timeout)
    killed += stop_pids(ctls, timeout)
    (state_dir / CLUSTER_FILE).unlink(missing_ok=True)
    info = statedir.read_info(state_dir)
    if info and info.get("urls"):
        statedir.info_path(state_dir).unlink(missing_ok=True)
    return pids, killed
