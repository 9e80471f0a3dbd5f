"""The spawner: one small process per worker that forks every job's process and stays its parent.

A job's process must have a parent that outlives the worker: a worker that was killed and
restarted is nobody's parent, and learns how the jobs it adopted ended only from what their parent
wrote down (Slurm's ``slurmstepd`` plays that part for ``slurmd``). That parent used to be a
per-job *keeper*, forked from the worker: a copy of a multi-threaded interpreter with its HTTP
client, forked twice per job, alive for the job's whole life, and the largest cost of a short job
(~3 ms of CPU of the ~15 ms a worker spent per ``true`` job, in page-table copies, copy-on-write
faults and Python's after-fork hooks). The spawner does the same for every job of its worker from
one process that imports only the start sequence (:mod:`xce.worker.launch`), so each fork copies
little: it forks the job's process, which runs :func:`xce.worker.launch._child` exactly as before,
and reaps it.

How a job ended must survive the worker: the spawner tells its worker, and keeps the wait status
until the worker says it has passed it on to the controller (``forget``). Only a status the worker
could not take that far (it died, or was killed, first) is written to the job's exit file, where
a restarted worker finds it. Writing every job's exit file cost a file created and deleted per job.

It runs in its own session with every signal but ``SIGCHLD`` blocked (nothing but SIGKILL ends
it while jobs run), talks to its worker over a private ``socketpair`` (one ``SOCK_SEQPACKET``
message per step, ``marshal``-encoded), and exits once its worker is gone and its last job has
ended. A restarted worker starts a new one; the old one writes its jobs' exit files and goes.

The steps of one start, seen from the worker (:meth:`Spawner.fork`, :meth:`Spawner.go`):
``start`` (the plan and the exit file's path) -> ``forked`` (the job's pid: the worker now runs its
preparation steps, as root, on that pid) -> ``go`` (or ``drop``) -> ``started`` (None once the
command runs, else the reason it could not). Then, whenever a job ends: ``exit`` (pid, status),
and from the worker, once the end is reported: ``forget`` (pid).
"""

from __future__ import annotations

import array
import itertools
import marshal
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from xce.worker.identity import StartError
from xce.worker.launch import START_TIMEOUT_S, Child, _child, _default_signal_dispositions, _Plan

_MAX_MSG = 1 << 20

#: Called (from a spawner's reader thread) whenever a job's process ended, or a spawner went away:
#: the worker reaps at once instead of at its next tick.
on_exit: list[Callable[[], None]] = []


def _send(sock: socket.socket, msg: tuple, fds: tuple[int, ...] = ()) -> None:
    data = marshal.dumps(msg)
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def _recv(sock: socket.socket) -> tuple[tuple | None, list[int]]:
    """One message and the descriptors it carried; (None, []) once the other side is gone."""
    data, anc, _, _ = sock.recvmsg(_MAX_MSG, socket.CMSG_SPACE(4 * 4))
    fds: list[int] = []
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(payload[:len(payload) - len(payload) % a.itemsize])
            fds.extend(a)
    return (marshal.loads(data) if data else None), fds


# -- the worker's side -----------------------------------------------------------------------

class Spawner:
    """The worker's handle on its spawner process (started on first use, thread-safe)."""

    def __init__(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen([sys.executable, "-m", "xce.worker.spawner", str(child.fileno())],
                                     pass_fds=[child.fileno()], start_new_session=True, stdin=subprocess.DEVNULL)
        child.close()
        self.sock = parent
        self.lock = threading.Lock()  # one sender at a time
        self.cond = threading.Condition()
        self.replies: dict[Any, tuple] = {}
        #: Wait statuses of ended jobs, by pid, until their Child reads them.
        self.exits: dict[int, int] = {}
        self.alive = True
        self._tokens = itertools.count(1)
        threading.Thread(target=self._read, name="spawner-reader", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                msg, fds = _recv(self.sock)
            except OSError:
                msg, fds = None, []
            for fd in fds:
                os.close(fd)
            if msg is None:
                with self.cond:
                    self.alive = False
                    self.cond.notify_all()
                try:
                    self.proc.wait(10.0)  # reaped here: the worker's child watcher would see it forever
                except subprocess.TimeoutExpired:
                    pass
                for fn in on_exit:
                    fn()
                return
            if msg[0] == "exit":
                with self.cond:
                    self.exits[msg[1]] = msg[2]
                    self.cond.notify_all()
                for fn in on_exit:
                    fn()
            else:
                with self.cond:
                    self.replies[(msg[0], msg[1])] = msg
                    self.cond.notify_all()

    def _ask(self, msg: tuple, answer: tuple, fds: tuple[int, ...] = (), late: str = "") -> tuple:
        gone = "cannot start a process on this host: the worker's spawner is gone"
        with self.lock:
            try:
                _send(self.sock, msg, fds)
            except OSError as exc:
                raise StartError(f"{gone} ({exc.strerror})") from None
        deadline = time.monotonic() + START_TIMEOUT_S
        with self.cond:
            while answer not in self.replies:
                if not self.alive:
                    raise StartError(gone)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StartError(late or "cannot start a process on this host: the worker's spawner does "
                                             "not answer")
                self.cond.wait(left)
            return self.replies.pop(answer)

    def fork(self, plan: _Plan, exit_file: str) -> int:
        """Fork the job's process (it waits for :meth:`go`); its pid. ``exit_file``: where its wait
        status goes if the worker cannot be told, or does not :meth:`forget` it."""
        token = next(self._tokens)
        fields = (plan.argv, plan.env, plan.search, plan.cwd, plan.stdout, plan.stderr, plan.uid, plan.gid,
                  tuple(plan.groups), plan.switch, plan.user)
        reply = self._ask(("start", token, fields, exit_file), ("forked", token))
        if reply[2] is None:
            raise StartError(f"cannot start a process on this host: {reply[3]}")
        with self.cond:  # an end told for an earlier process with this pid is not this one's
            self.exits.pop(reply[2], None)
        return reply[2]

    def go(self, pid: int, go: bool = True) -> str | None:
        """Let the process run its command (or, with ``go=False``, give up on it); None once its
        command runs, else why it could not start."""
        if not go:
            with self.lock:
                try:
                    _send(self.sock, ("drop", pid))
                except OSError:
                    pass
            return None
        return self._ask(("go", pid), ("started", pid),
                         late=f"the job's process did not start within {START_TIMEOUT_S:g}s (a file system that "
                              f"does not answer?); it was killed")[2]

    def status(self, pid: int) -> int | None:
        with self.cond:
            return self.exits.pop(pid, None)

    def forget(self, pid: int) -> None:
        """The end of ``pid`` is on record at the controller: its exit file is not needed."""
        with self.lock:
            try:
                _send(self.sock, ("forget", pid))
            except OSError:
                pass


class SpawnedChild(Child):
    """A job's process whose parent is the spawner: its end is learned from the spawner's message
    (``orphaned`` once the spawner itself is gone without telling: the worker then watches the job
    like one adopted after a restart)."""

    def __init__(self, spawner: Spawner, pid: int) -> None:
        super().__init__(pid)
        self.spawner = spawner

    @property
    def orphaned(self) -> bool:
        return self.returncode is None and not self.spawner.alive and self.poll() is None

    def forget(self) -> None:
        self.spawner.forget(self.pid)

    def poll(self) -> int | None:
        if self.returncode is None:
            status = self.spawner.status(self.pid)
            if status is not None:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


_shared: Spawner | None = None
_shared_lock = threading.Lock()


def shared() -> Spawner:
    """This process's spawner, started on first use (again if the last one died)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            _shared = Spawner()
        return _shared


# -- the spawner process ---------------------------------------------------------------------

class _Job:
    __slots__ = ("token", "exit_file", "go_w", "status_r", "chunks")

    def __init__(self, token: int, exit_file: str, go_w: int, status_r: int) -> None:
        self.token, self.exit_file, self.go_w, self.status_r = token, exit_file, go_w, status_r
        self.chunks: list[bytes] = []


def _write_exit(path: str, status: int) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return  # its worker's state directory is gone: nobody is left to read it
    try:
        os.write(fd, b"%d\n" % status)
    except OSError:
        pass
    finally:
        os.close(fd)


def _serve(sock: socket.socket) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.valid_signals()) - {signal.SIGCHLD})
    # Once here rather than in every job's child: nothing ignored (by this interpreter, or by whatever
    # started the worker) survives into a job, and SIGCHLD's handler is reset by the job's execve.
    _default_signal_dispositions()
    # One exit file held open per running job: room for as many as the host allows, while each job
    # still starts with the limit the worker was given.
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile[1], nofile[1]))
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    jobs: dict[int, _Job] = {}
    starting: dict[int, int] = {}  # status pipe -> pid
    told: dict[int, tuple[str, int]] = {}  # ended, told, not yet forgotten: pid -> (exit file, status)
    connected = True
    poller = select.poll()  # not select(): descriptors beyond 1024 are usual with many jobs
    poller.register(wake_r, select.POLLIN)
    poller.register(sock, select.POLLIN)

    def tell(msg: tuple) -> None:
        nonlocal connected
        if connected:
            try:
                _send(sock, msg)
            except OSError:
                connected = False

    def start(token: int, fields: tuple, exit_file: str) -> None:
        plan = _Plan(*fields)
        try:
            go_r, go_w = os.pipe2(os.O_CLOEXEC)
            status_r, status_w = os.pipe2(os.O_CLOEXEC)
        except OSError as exc:
            tell(("forked", token, None, exc.strerror))
            return
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in (go_r, go_w, status_r, status_w):
                os.close(fd)
            tell(("forked", token, None, exc.strerror))
            return
        if pid == 0:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
            _child(plan, go_r, status_w, reset_signals=False)  # never returns
        os.close(go_r)
        os.close(status_w)
        jobs[pid] = _Job(token, exit_file, go_w, status_r)
        starting[status_r] = pid
        poller.register(status_r, select.POLLIN)
        tell(("forked", token, pid))

    def release(pid: int, go: bool) -> None:
        job = jobs.get(pid)
        if job is None or job.go_w < 0:
            return
        try:
            if go:
                os.write(job.go_w, b"g")
        finally:
            os.close(job.go_w)
            job.go_w = -1

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            job = jobs.pop(pid, None)
            if job is None:
                continue
            if connected:
                told[pid] = (job.exit_file, status)
            else:
                _write_exit(job.exit_file, status)
            if job.go_w >= 0:
                os.close(job.go_w)
            if job.status_r >= 0:  # it ended before its start was told: its reason, whole
                del starting[job.status_r]
                poller.unregister(job.status_r)
                try:
                    while chunk := os.read(job.status_r, 4096):
                        job.chunks.append(chunk)
                except OSError:
                    pass
                os.close(job.status_r)
                # Nothing written: its command ran (and has ended already).
                tell(("started", pid, b"".join(job.chunks).decode(errors="replace") or None))
            tell(("exit", pid, status))

    while connected or jobs:
        for fd, _ in poller.poll():
            if fd == wake_r:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            elif fd == sock.fileno():
                try:
                    msg, fds = _recv(sock)
                except OSError:
                    msg, fds = None, []
                for extra in fds:
                    os.close(extra)
                if msg is None:
                    connected = False  # the worker is gone: the jobs waiting for their go never get it
                    poller.unregister(sock)
                    for pid in list(jobs):
                        release(pid, False)
                    for path, status in told.values():  # ends it may not have passed on
                        _write_exit(path, status)
                    told.clear()
                    continue
                if msg[0] == "start":
                    start(msg[1], msg[2], msg[3])
                elif msg[0] == "forget":
                    told.pop(msg[1], None)
                elif msg[0] in ("go", "drop"):
                    release(msg[1], msg[0] == "go")
            elif fd in starting:
                pid = starting[fd]
                data = os.read(fd, 4096)
                if data:
                    jobs[pid].chunks.append(data)
                    continue
                # Closed by execve (O_CLOEXEC): the command runs; or by the child's exit after a reason.
                del starting[fd]
                poller.unregister(fd)
                os.close(fd)
                job = jobs[pid]
                job.status_r = -1  # its number may name the next job's pipe
                tell(("started", pid, b"".join(job.chunks).decode(errors="replace") or None))
        reap()


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(sock.fileno(), False)
    try:
        _serve(sock)
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
