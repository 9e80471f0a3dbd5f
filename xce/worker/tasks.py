"""The task server: how ``xce launch`` starts the tasks of a parallel job on each of its hosts.

Every worker listens on one TCP port (advertised to the controller when it registers, handed to
the job's hosts in its start action). ``xce launch``, run inside the job, connects to each host of
the job and asks for its share of the tasks. The request is signed with the job's *launch key*, a
secret the controller made for that job and gave only to its hosts (so only to the job's
environment): whoever knows it is the job, and a task runs as the job's owner anyway. The key
itself never crosses the network (:mod:`xce.worker.taskauth`: a MAC over a per-connection nonce).

The tasks start the way every process of a job starts (:func:`xce.worker.launch.launch`: the
owner's identity, its own session), joined to the job's container on this host before their first
instruction, so suspending, killing, limits and usage reach them with the job. Their stdout and
stderr come back line by line over the connection; a signal from ``xce launch`` goes to every
task's process group; when the connection drops before they end (``xce launch`` was killed), the
tasks are killed.

Wire format: JSON lines. The server speaks first: ``{"nonce"}``. Request: ``{"jobid", "argv", "cwd",
"env", "tasks": [ids], "ntasks", "mac"}``; replies: ``{"started": id, "pid"}`` per task or one ``{"error": why}``, then
``{"task", "stream": "out"|"err", "line"}`` and ``{"task", "exit", "signal"}``, and last
``{"done": true}``. The client may send ``{"signal": N}`` at any time.

The same port serves an interactive job's terminal to its user's ``xce submit -I`` (a request with
``"attach": true``, signed with an attach key instead): :mod:`xce.worker.interactive`.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from xce.worker import interactive, launch, runner, taskauth
from xce.worker.identity import StartError

if TYPE_CHECKING:
    from xce.worker.agent import Agent

log = logging.getLogger("xce.worker.tasks")

#: How long a task's output is still read after it exited (a background child may hold the pipe).
DRAIN_S = 0.5
MAX_REQUEST = 1 << 20
#: A caller has this long to send its whole request (however slowly it trickles in), and at most
#: this many callers may be that far at once: a connection that proves nothing holds no thread long.
REQUEST_WITHIN_S = 10.0
MAX_UNPROVEN = 64


def local_address(url: str) -> str:
    """This host's address on the way to the controller at ``url``: the one other hosts reach."""
    host = urlsplit(url.split(",")[0].strip()).hostname or "127.0.0.1"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, 9))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


class TaskServer:
    def __init__(self, agent: "Agent", port: int = 0) -> None:
        self.agent = agent
        self.port = port
        self.address: str | None = None
        self.sock: socket.socket | None = None
        self.unproven = threading.BoundedSemaphore(MAX_UNPROVEN)

    def start(self) -> None:
        """Listen on every address of this host (the key, not the network, admits a caller), or on
        the loopback address alone when the controller is reached there: a cluster of one machine
        is not served to the network."""
        here = local_address(self.agent.url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1" if here.startswith("127.") else "0.0.0.0", self.port))
        except OSError as exc:
            log.warning("no task server on port %s (%s): xce launch cannot start tasks here", self.port, exc)
            sock.close()
            return
        sock.listen(64)
        self.sock = sock
        self.address = f"{here}:{sock.getsockname()[1]}"
        threading.Thread(target=self._accept, name="task-server", daemon=True).start()

    def stop(self) -> None:
        """Take no more launches (those running go on until their connection ends)."""
        sock, self.sock = self.sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            except OSError:
                pass
            sock.close()

    def _accept(self) -> None:
        sock = self.sock
        assert sock is not None
        while not self.agent.stopping.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            if not self.unproven.acquire(blocking=False):  # as many callers as it serves are still silent
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="task-conn", daemon=True).start()

    # -- one launch ------------------------------------------------------------------------
    def _serve(self, conn: socket.socket) -> None:
        with conn:
            challenge = taskauth.nonce()
            try:
                try:
                    _send(conn, {"nonce": challenge})
                    req = _read_request(conn)
                finally:
                    self.unproven.release()
                if req.get("attach"):  # an interactive job's terminal, not tasks (xce.worker.interactive)
                    interactive.serve(self.agent, conn, req, challenge)
                    return
                tasks = self._start(req, challenge)
            except _Refused as exc:
                try:
                    _send(conn, {"error": str(exc)})
                except OSError:
                    pass  # the caller is gone: nobody to tell
                return
            except (OSError, ValueError) as exc:
                log.warning("a task request failed: %s", exc)
                return
            steps = self._steps(req)
            steps.update(t.child.pid for t in tasks)  # each task leads its own process group
            try:
                _Relay(conn, tasks).run()
            finally:
                steps.difference_update(t.child.pid for t in tasks)
                for t in tasks:
                    if t.child.poll() is None:
                        _killpg(t.child.pid, signal.SIGKILL)
                        t.child.wait(5.0)
                    t.close()

    def _steps(self, req: dict[str, Any]) -> set[int]:
        """The job's set of running task groups (a set of its own if the job is already gone)."""
        jp = self.agent.jobs.get(int(req["jobid"]))
        return jp.steps if jp is not None else set()

    def _start(self, req: dict[str, Any], challenge: str) -> list["_Task"]:
        agent = self.agent
        try:
            jobid = int(req["jobid"])
            ids = [int(i) for i in req["tasks"]]
            argv = [str(a) for a in req["argv"]]
            ntasks = int(req["ntasks"])
        except (KeyError, TypeError, ValueError):
            raise _Refused("malformed request") from None
        jp = agent.jobs.get(jobid)
        key = (jp.job.get("launch_key") or "") if jp is not None else ""
        if jp is None or not taskauth.verify(key, challenge, req):
            raise _Refused(f"job {jobid} does not run on {agent.name}")
        if jp.end_reason:
            raise _Refused(f"job {jobid} is ending on {agent.name} ({jp.end_reason})")
        job = jp.job
        try:
            ident = runner.resolve_identity(job.get("user", ""), run_as_self=agent.run_as_self,
                                            allow_root=agent.allow_root_jobs)
        except StartError as exc:
            raise _Refused(str(exc)) from None
        caller = {str(k): str(v) for k, v in (req.get("env") or {}).items()}
        cwd = str(req.get("cwd") or job.get("cwd") or ident.home or "/")
        started: list[_Task] = []
        try:
            for local, tid in enumerate(ids):
                # The caller's environment (the job script's, as it is now) with the job's own variables
                # over it, this task's rank among them ($SLURM_PROCID, $SLURM_LOCALID).
                env = {**runner.job_env(job, ident, host=agent.name, gpus=list(jp.gpus), user_env=caller,
                                        task=(tid, local)),
                       "XCE_TASK_ID": str(tid), "XCE_HOST": agent.name, "XCE_NTASKS": str(ntasks)}
                out_r, out_w = os.pipe2(os.O_CLOEXEC)
                err_r, err_w = os.pipe2(os.O_CLOEXEC)
                try:
                    spec = launch.LaunchSpec(argv=argv, env=env, cwd=cwd, stdout="", stderr="", identity=ident,
                                             prepare=[lambda pid: agent.box.join(jobid, pid)], fds=(out_w, err_w))
                    child = launch.launch(spec)
                except StartError as exc:
                    os.close(out_r)
                    os.close(err_r)
                    raise _Refused(f"task {tid} could not start: {exc}") from None
                finally:
                    os.close(out_w)
                    os.close(err_w)
                agent.child_started.set()
                started.append(_Task(tid, child, {"out": out_r, "err": err_r}))
        except BaseException:
            for t in started:
                _killpg(t.child.pid, signal.SIGKILL)
                t.child.wait(5.0)
                t.close()
            raise
        return started


class _Refused(Exception):
    pass


@dataclass
class _Task:
    tid: int
    child: launch.Child
    fds: dict[str, int]
    partial: dict[str, bytes] = field(default_factory=lambda: {"out": b"", "err": b""})
    exited_at: float | None = None
    reported: bool = False

    def close(self) -> None:
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


class _Relay:
    """Forward the tasks' output to the connection and the connection's signals to the tasks."""

    def __init__(self, conn: socket.socket, tasks: list[_Task]) -> None:
        self.conn = conn
        self.tasks = tasks
        self.sel = selectors.DefaultSelector()
        self.inbuf = b""
        self.gone = False

    def run(self) -> None:
        for t in self.tasks:
            _send(self.conn, {"started": t.tid, "pid": t.child.pid})
        for t in self.tasks:
            for stream, fd in t.fds.items():
                self.sel.register(fd, selectors.EVENT_READ, (t, stream))
        self.conn.setblocking(False)
        self.sel.register(self.conn, selectors.EVENT_READ, None)
        while not all(t.reported for t in self.tasks):
            for key, _ in self.sel.select(0.05):
                if key.data is None:
                    self._from_client()
                else:
                    self._output(*key.data)
            if self.gone:
                for t in self.tasks:
                    if t.child.poll() is None:
                        _killpg(t.child.pid, signal.SIGKILL)
                return
            self._exits()
        self._send({"done": True})

    def _send(self, msg: dict[str, Any]) -> None:
        if self.gone:
            return
        data = (json.dumps(msg) + "\n").encode()
        self.conn.setblocking(True)
        try:
            self.conn.sendall(data)
        except OSError:
            self.gone = True
        finally:
            self.conn.setblocking(False)

    def _from_client(self) -> None:
        try:
            data = self.conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.gone = True
            self.sel.unregister(self.conn)
            return
        self.inbuf += data
        while b"\n" in self.inbuf:
            line, self.inbuf = self.inbuf.split(b"\n", 1)
            try:
                sig = int(json.loads(line).get("signal"))
            except (ValueError, TypeError, AttributeError):
                continue
            for t in self.tasks:
                if t.child.poll() is None:
                    _killpg(t.child.pid, sig)

    def _output(self, t: _Task, stream: str) -> None:
        fd = t.fds.get(stream)
        if fd is None:
            return
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            self._close(t, stream)
            return
        buf = t.partial[stream] + data
        *lines, t.partial[stream] = buf.split(b"\n")
        for line in lines:
            self._send({"task": t.tid, "stream": stream, "line": line.decode(errors="replace")})

    def _close(self, t: _Task, stream: str) -> None:
        fd = t.fds.pop(stream, None)
        if fd is None:
            return
        self.sel.unregister(fd)
        os.close(fd)
        if t.partial[stream]:
            self._send({"task": t.tid, "stream": stream, "line": t.partial[stream].decode(errors="replace")})
            t.partial[stream] = b""

    def _exits(self) -> None:
        now = time.monotonic()
        for t in self.tasks:
            if t.reported:
                continue
            rc = t.child.poll()
            if rc is None:
                continue
            if t.exited_at is None:
                t.exited_at = now
            if t.fds and now - t.exited_at < DRAIN_S:
                continue  # its last output may still be in the pipe
            for stream in list(t.fds):
                self._close(t, stream)
            sig = None
            if rc < 0:
                try:
                    sig = signal.Signals(-rc).name
                except ValueError:
                    sig = f"SIG{-rc}"
            self._send({"task": t.tid, "exit": 128 - rc if rc < 0 else rc, "signal": sig})
            t.reported = True


def _read_request(conn: socket.socket) -> dict[str, Any]:
    deadline = time.monotonic() + REQUEST_WITHIN_S
    buf = b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Refused(f"no whole request within {REQUEST_WITHIN_S:g}s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            raise _Refused(f"no whole request within {REQUEST_WITHIN_S:g}s") from None
        if not chunk:
            raise _Refused("the request ended early")
        buf += chunk
        if len(buf) > MAX_REQUEST:
            raise _Refused("request too large")
    conn.settimeout(None)
    try:
        req = json.loads(buf.split(b"\n", 1)[0])
    except ValueError:
        raise _Refused("the request is not JSON") from None
    if not isinstance(req, dict):
        raise _Refused("the request is not a JSON object")
    return req


def _send(conn: socket.socket, msg: dict[str, Any]) -> None:
    try:
        conn.sendall((json.dumps(msg) + "\n").encode())
    except OSError:
        pass


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
