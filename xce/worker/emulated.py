"""Emulated hosts: one process that is many workers to the controller, running no job at all.

What it is for: showing what a controller and its scheduler do with thousands of hosts (tests,
``bench/fleet.py``) on one machine. Every host is a real registration and every job goes through
the real protocol (its start action, its ``started`` and ``finished`` reports, kills, suspends),
so the controller cannot tell these hosts from real ones except by their traffic's shape: one
request carries all of them (``/v1/workers/register-many``, ``poll``, ``heartbeat``, ``reports``),
which is what lets ten thousand of them cost the controller next to nothing while idle.

A started job "runs" for ``--run-time`` seconds when given, else for the seconds of a ``sleep N``
command, else for its run limit, else not at all (it finishes at once), and ends with exit code 0.
Nothing is forked and nothing is kept on disk: an emulator that stops takes its hosts' jobs with
it, and its hosts go ``unreach`` after the worker timeout, as real hosts whose worker died.

Four threads, each with its own kept-alive connection: the main loop polls actions of every host
(one long-poll, answered when an action is queued for any of them), the heartbeat thread beats for
all hosts, the reporter sends job reports as they are made (those made together in one request),
the clock ends jobs when their time is up.
"""

from __future__ import annotations

import heapq
import logging
import queue
import signal
import sys
import threading
import time
from typing import Any

from xce.client import follow
from xce.protocol.actions import KillJob, ResumeJob, StartJob, SuspendJob, decode

log = logging.getLogger("xce.worker.emulated")

#: How long one poll for actions waits (answered at once when an action is queued).
POLL_WAIT_S = 25.0
#: Hosts per registration request (a request stays well under the controller's body limit).
REGISTER_CHUNK = 1000
#: How long a report waits for company, so that jobs ending together make one request.
LINGER_S = 0.02


class Emulator:
    def __init__(self, url: str, token: str, names: list[str], *, slots: int = 8, mem: int = 64 << 30,
                 run_time: float | None = None, ca_file: str | None = None) -> None:
        self.url, self.token, self.ca_file = url, token, ca_file
        self.names = names
        self.slots, self.mem, self.run_time = slots, mem, run_time
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        #: (host, jobid) -> the run being emulated (the start action's ``run``).
        self.running: dict[tuple[str, int], Any] = {}
        self.suspended: set[tuple[str, int]] = set()
        self.clock: list[tuple[float, str, int, Any]] = []  # (end, host, jobid, run), a heap
        self.clock_changed = threading.Condition(self.lock)
        self.reports: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.heartbeat_s = 5.0
        self.after = 0
        self.registered = threading.Event()

    def _session(self, timeout: float = 30.0) -> follow.Session:
        return follow.Session(self.url, self.token, timeout=timeout, ca_file=self.ca_file)

    # -- registration ----------------------------------------------------------------------
    def register(self, http: follow.Session, names: list[str]) -> None:
        """Register ``names`` (again, after a controller restart: with the jobs each still runs)."""
        running: dict[str, list[int]] = {}
        with self.lock:
            for h, j in sorted(self.running):
                running.setdefault(h, []).append(j)
        for i in range(0, len(names), REGISTER_CHUNK):
            chunk = names[i:i + REGISTER_CHUNK]
            body = {"hosts": [{"name": n, "resources": {"slots": self.slots, "ncpus": self.slots, "maxmem": self.mem,
                                                        "type": "EMULATED"},
                               "load": {}, "running": running.get(n, []), "containment": "process-group"}
                              for n in chunk]}
            r = self._post(http, "/v1/workers/register-many", body)
            if r is None:
                return
            if r.status_code >= 400:
                raise RuntimeError(f"the controller refused to register emulated hosts: HTTP {r.status_code} "
                                   f"{r.text[:300]}")
            for res in r.json()["results"]:
                if "error" in res:
                    raise RuntimeError(f"the controller refused to register {res['name']}: {res['error']}")
                self.heartbeat_s = float(res.get("heartbeat_interval", self.heartbeat_s))
                for jobid in res.get("kill", []):
                    self._end(res["name"], int(jobid), report=False)
        self.registered.set()

    # -- requests --------------------------------------------------------------------------
    def _post(self, http: follow.Session, path: str, body: dict[str, Any]) -> Any:
        """POST until the controller answers finally (None: stopping)."""
        key = follow.request_key()
        attempt = 0
        while not self.stopping.is_set():
            attempt += 1
            try:
                r = http.post(path, json=body, key=key)
            except follow.Unreachable as exc:
                log.warning("controller unreachable (%s); retrying", exc)
            else:
                if not follow.retryable(r.status_code):
                    return r
            self.stopping.wait(follow.backoff(attempt, cap=2.0, first=0.25))
        return None

    # -- actions ---------------------------------------------------------------------------
    def poll_loop(self) -> None:
        http = self._session(timeout=POLL_WAIT_S + 10)
        while not self.stopping.is_set():
            r = self._post(http, "/v1/workers/poll", {"hosts": self.names, "after": self.after,
                                                      "wait": POLL_WAIT_S, "limit": 5000})
            if r is None:
                return
            if r.status_code >= 400:
                log.warning("actions refused: HTTP %s %s", r.status_code, r.text[:300])
                self.stopping.wait(1.0)
                continue
            out = r.json()
            if out.get("unknown"):
                log.warning("%d emulated host(s) not registered (a controller restart?): registering them",
                            len(out["unknown"]))
                self.register(http, out["unknown"])
            for action in out["actions"]:
                try:
                    self.handle(action)
                except Exception:  # noqa: BLE001 - one bad action must not stop the others
                    log.exception("action %s failed", action)
                self.after = max(self.after, int(action["id"]))

    def handle(self, action: dict[str, Any]) -> None:
        act = decode(action)  # one that does not decode is logged by the poll loop with the rest
        host, key = action["host"], (action["host"], act.jobid)
        if isinstance(act, StartJob):
            with self.lock:
                if key in self.running:
                    return  # delivered again: already running
                self.running[key] = act.run
                end = time.monotonic() + self._duration(act)
                heapq.heappush(self.clock, (end, host, act.jobid, act.run))
                self.clock_changed.notify()
            if (act.placement or [(host, act.tasks)])[0][0] == host:
                self.reports.put((host, {"jobid": act.jobid, "status": "started"}))
        elif isinstance(act, KillJob):
            self._end(host, act.jobid, report=True, exit_code=128 + signal.SIGTERM, sig="SIGTERM", reason=act.reason)
        elif isinstance(act, (SuspendJob, ResumeJob)):
            with self.lock:
                if key not in self.running:
                    return
                (self.suspended.add if isinstance(act, SuspendJob) else self.suspended.discard)(key)
            self.reports.put((host, {"jobid": act.jobid, "status": act.kind + "d", "reason": act.reason}))
        # SignalJob, AttachKey, SetRunLimit: nothing here to signal, attach to or limit

    def _duration(self, job: StartJob) -> float:
        if self.run_time is not None:
            return self.run_time
        if len(job.command) == 2 and job.command[0] == "sleep":
            try:
                return max(0.0, float(job.command[1]))
            except ValueError:
                pass
        return float(job.run_limit or 0)

    def _end(self, host: str, jobid: int, *, report: bool, exit_code: int = 0, sig: str | None = None,
             reason: str = "") -> None:
        with self.lock:
            if self.running.pop((host, jobid), None) is None and report:
                return
            self.suspended.discard((host, jobid))
        if report:
            self.reports.put((host, {"jobid": jobid, "status": "finished", "exit_code": exit_code, "signal": sig,
                                     "reason": reason}))

    def clock_loop(self) -> None:
        """Ends each job when its time is up (a suspended job's clock runs on: no job process to stop)."""
        while not self.stopping.is_set():
            with self.lock:
                now = time.monotonic()
                due = []
                while self.clock and self.clock[0][0] <= now:
                    due.append(heapq.heappop(self.clock))
                if not due:
                    wait = self.clock[0][0] - now if self.clock else 1.0
                    self.clock_changed.wait(min(wait, 1.0))
                    continue
            for _, host, jobid, run in due:
                with self.lock:
                    current = self.running.get((host, jobid), object())
                if current == run:
                    self._end(host, jobid, report=True)

    # -- reports and heartbeats ------------------------------------------------------------
    def report_loop(self) -> None:
        http = self._session()
        while not self.stopping.is_set():
            try:
                first = self.reports.get(timeout=0.5)
            except queue.Empty:
                continue
            batch = [first]
            deadline = time.monotonic() + LINGER_S
            while (left := deadline - time.monotonic()) > 0:
                try:
                    batch.append(self.reports.get(timeout=left))
                except queue.Empty:
                    break
            while True:
                try:
                    batch.append(self.reports.get_nowait())
                except queue.Empty:
                    break
            by_host: dict[str, list[dict[str, Any]]] = {}
            for host, rep in batch:
                by_host.setdefault(host, []).append(rep)
            r = self._post(http, "/v1/workers/reports", {"hosts": by_host})
            if r is not None and r.status_code >= 400:
                log.warning("reports refused: HTTP %s %s", r.status_code, r.text[:300])

    def heartbeat_loop(self) -> None:
        http = self._session()
        while not self.stopping.wait(self.heartbeat_s):
            r = self._post(http, "/v1/workers/heartbeat", {"alive": self.names})
            if r is None:
                return
            if r.status_code >= 400:
                log.warning("heartbeat refused: HTTP %s %s", r.status_code, r.text[:300])
                continue
            out = r.json()
            if out.get("unknown"):
                self.register(http, out["unknown"])
            for host, jobids in out.get("kill", {}).items():
                for jobid in jobids:
                    self._end(host, int(jobid), report=True, exit_code=128 + signal.SIGTERM, sig="SIGTERM",
                              reason=f"job {jobid} must not run on {host}")

    # -- the process -----------------------------------------------------------------------
    def run(self) -> int:
        started = time.monotonic()
        try:
            self.register(self._session(timeout=120.0), self.names)
        except RuntimeError as exc:
            print(f"xce emulate-hosts: {exc}", file=sys.stderr)
            return 1
        if self.stopping.is_set():
            return 0
        log.warning("%d emulated hosts registered with %s in %.1f s (heartbeat every %.1f s)", len(self.names),
                    self.url, time.monotonic() - started, self.heartbeat_s)
        for target in (self.poll_loop, self.heartbeat_loop, self.report_loop, self.clock_loop):
            threading.Thread(target=target, name=target.__name__, daemon=True).start()
        while not self.stopping.wait(1.0):
            pass
        return 0


def host_names(prefix: str, n: int) -> list[str]:
    width = max(4, len(str(n)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, n + 1)]


def main(*, count: int, prefix: str, slots: int, mem: str, run_time: float | None, state_dir: str | None,
         url: str | None, token: str | None, log_level: str = "WARNING") -> int:
    from xce import logs
    from xce.client import statedir
    from xce.core.quantity import QuantityError, parse_quantity

    logs.configure("emulate-hosts", log_level, None)
    if count < 1:
        print(f"xce emulate-hosts: the number of hosts must be at least 1, got {count}", file=sys.stderr)
        return 2
    try:
        mem_bytes = parse_quantity("maxmem", mem)
    except QuantityError as exc:
        print(f"xce emulate-hosts: --mem: {exc}", file=sys.stderr)
        return 2
    try:
        url, token, sd = statedir.worker_endpoint(url, token, state_dir)
    except ValueError as exc:
        print(f"xce emulate-hosts: {exc}", file=sys.stderr)
        return 2
    emu = Emulator(url, token, host_names(prefix, count), slots=slots, mem=mem_bytes, run_time=run_time,
                   ca_file=statedir.ca_file(sd))

    def stop(*_: Any) -> None:
        emu.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return emu.run()
