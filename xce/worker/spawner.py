"""The spawner: one small process per worker that forks every job's process and stays its parent
(the worker's side of it; the process itself is :mod:`xce.worker.spawnd`).

A job's process must have a parent that outlives the worker: a worker that was killed and
restarted is nobody's parent, and learns how the jobs it adopted ended only from what their parent
wrote down (Slurm's ``slurmstepd`` plays that part for ``slurmd``). That parent used to be a
per-job *keeper*, forked from the worker: a copy of a multi-threaded interpreter with its HTTP
client, forked twice per job, alive for the job's whole life, and the largest cost of a short job
(~3 ms of CPU of the ~15 ms a worker spent per ``true`` job, in page-table copies, copy-on-write
faults and Python's after-fork hooks). The spawner does the same for every job of its worker from
one process that imports only the child's steps (:mod:`xce.worker.child`), so each fork copies
little: it forks the job's process, which runs :func:`xce.worker.child.run` exactly as the worker's
own forks do, and reaps it.

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
command runs, else the reason it could not). A job whose only preparation is its control groups'
join takes one exchange (:meth:`Spawner.spawn`): ``spawn`` (the plan, the exit file, the groups'
``cgroup.procs`` and, where the spawner may start it from inside them, its own) -> ``spawned``.
Then, whenever a job ends: ``exit`` (pid, status), and from the worker, once the end is reported:
``forget`` (pid).
"""

from __future__ import annotations

import itertools
import marshal
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from xce.worker.child import Plan
from xce.worker.identity import StartError
from xce.worker.started import START_TIMEOUT_S, Child

_MAX_MSG = 1 << 20

#: Called (from a spawner's reader thread) whenever a job's process ended, or a spawner went away:
#: the worker reaps at once instead of at its next tick.
on_exit: list[Callable[[], None]] = []


def _send(sock: socket.socket, msg: tuple) -> None:
    sock.send(marshal.dumps(msg))


# -- the worker's side -----------------------------------------------------------------------

class Spawner:
    """The worker's handle on its spawner process (started on first use, thread-safe)."""

    def __init__(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen([sys.executable, "-m", "xce.worker.spawnd", str(child.fileno())],
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
                data = self.sock.recv(_MAX_MSG)
                msg = marshal.loads(data) if data else None
            except (OSError, ValueError, EOFError):
                msg = None
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
                    if msg[0] in ("forked", "spawned") and msg[2] is not None:
                        # An end told earlier for this pid was an earlier process's: the new one's end
                        # can only come after this message, in order.
                        self.exits.pop(msg[2], None)
                    self.replies[(msg[0], msg[1])] = msg
                    self.cond.notify_all()

    def _ask(self, msg: tuple, answer: tuple, late: str = "") -> tuple:
        gone = "cannot start a process on this host: the worker's spawner is gone"
        with self.lock:
            try:
                _send(self.sock, msg)
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

    def fork(self, plan: Plan, exit_file: str) -> int:
        """Fork the job's process (it waits for :meth:`go`); its pid. ``exit_file``: where its wait
        status goes if the worker cannot be told, or does not :meth:`forget` it."""
        token = next(self._tokens)
        reply = self._ask(("start", token, plan.fields(), exit_file), ("forked", token))
        if reply[2] is None:
            raise StartError(reply[3])
        return reply[2]

    def spawn(self, plan: Plan, exit_file: str, join: tuple[str, ...],
              home: tuple[str, ...] | None = None) -> tuple[int, str | None]:
        """:meth:`fork` and :meth:`go` in one exchange, for a process whose only preparation is to be
        written into ``join`` (its control groups' ``cgroup.procs``), which the spawner does itself:
        its pid, and None once its command runs, else why it could not start. With ``home`` (the
        spawner's own groups, one per file of ``join``), a job that runs as the spawner's own user is
        started without a fork, from inside its groups (:func:`xce.worker.child.spawn`)."""
        token = next(self._tokens)
        reply = self._ask(("spawn", token, plan.fields(), exit_file, join, home), ("spawned", token),
                          late=f"the job's process did not start within {START_TIMEOUT_S:g}s (a file system "
                               f"that does not answer?); it was killed")
        if reply[2] is None:
            raise StartError(reply[3])
        return reply[2], reply[3]

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


def stop_shared(timeout: float = 10.0) -> None:
    """Let this process's spawner go, and wait until it has: it goes once its last job has ended,
    writing the ends not forgotten to their exit files (its worker is stopping)."""
    global _shared
    with _shared_lock:
        sp, _shared = _shared, None
    if sp is None:
        return
    try:
        sp.sock.shutdown(socket.SHUT_RDWR)  # the spawner reads the end; so does the reader thread
    except OSError:
        pass
    try:
        sp.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        pass


def shared() -> Spawner:
    """This process's spawner, started on first use (again if the last one died)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            _shared = Spawner()
        return _shared
