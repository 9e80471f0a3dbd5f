"""The spawner process: starts every job's process for its worker and stays the job's parent.

Why it exists, and the messages it exchanges with its worker, are in :mod:`xce.worker.spawner` (the
worker's side). This side imports as little as it can (the child's steps, :mod:`xce.worker.child`,
and a few modules of the standard library): each fork copies the page tables of this process and
each ``execve`` tears its copy down, so its size is paid by every job. Messages are read and
written with plain ``read``/``write`` on the ``SOCK_SEQPACKET`` socket, which keeps each one whole.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import sys

from xce.worker.child import CAN_SPAWN, Plan, Refused, default_signal_dispositions, run, spawn, write_pid
from xce.worker.localfs import is_local

_MAX_MSG = 1 << 20


class _Job:
    __slots__ = ("token", "exit_file", "go_w", "status_r", "chunks", "spawned")

    def __init__(self, token: int, exit_file: str, go_w: int, status_r: int, spawned: bool) -> None:
        self.token, self.exit_file, self.go_w, self.status_r = token, exit_file, go_w, status_r
        self.chunks: list[bytes] = []
        self.spawned = spawned  # started in one exchange ("spawn"): answered with "spawned", not "started"


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


def _on_local_disks(plan: Plan) -> bool:
    """Whether every path a start without a fork touches is on a local file system (see
    :mod:`xce.worker.localfs`): the working directory, the outputs' directories (an output that is a
    symbolic link is refused), and the command's candidates up to the one that is there."""
    if not all(is_local(p, plan.cwd) for p in (plan.cwd, os.path.dirname(plan.stdout), os.path.dirname(plan.stderr))):
        return False
    for path in plan.search:
        if not is_local(path, plan.cwd):
            return False
        if os.path.isfile(os.path.join(plan.cwd, path)):
            break  # the search stops here
    return True


def serve(sock: int) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.valid_signals()) - {signal.SIGCHLD})
    # Once here rather than in every job's child: nothing ignored (by this interpreter, or by whatever
    # started the worker) survives into a job, and SIGCHLD's handler is reset by the job's execve.
    default_signal_dispositions()
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
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # where :func:`spawn` comes back to
    # A job started without a fork gets every descriptor not marked close-on-exec (a forked one
    # closes them itself): whatever this process was given, it does not pass on.
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2 and int(name) != sock:
            try:
                os.set_inheritable(int(name), False)
            except OSError:
                pass  # the listing's own descriptor, closed by now
    me = os.getpid()

    def tell(msg: tuple) -> None:
        nonlocal connected
        if connected:
            try:
                os.write(sock, marshal.dumps(msg))
            except OSError:
                connected = False

    def start(token: int, fields: tuple, exit_file: str, join: tuple[str, ...] | None = None,
              home: tuple[str, ...] | None = None) -> None:
        """Fork; with ``join`` (a "spawn"), also write its pid there and let it go at once; with
        ``home`` as well, no identity to switch and nothing on a file system that could stop
        answering, start it without a fork (:func:`spawn`)."""
        answer = "forked" if join is None else "spawned"
        plan = Plan(*fields)
        if join is not None and home is not None and not plan.switch and CAN_SPAWN and _on_local_disks(plan):
            direct(token, plan, exit_file, join, home)
            return
        try:
            go_r, go_w = os.pipe2(os.O_CLOEXEC)
            status_r, status_w = os.pipe2(os.O_CLOEXEC)
        except OSError as exc:
            tell((answer, token, None, f"cannot start a process on this host: {exc.strerror}"))
            return
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in (go_r, go_w, status_r, status_w):
                os.close(fd)
            tell((answer, token, None, f"cannot start a process on this host: {exc.strerror}"))
            return
        if pid == 0:
            run(plan, go_r, status_w, reset_signals=False)  # never returns
        os.close(go_r)
        os.close(status_w)
        job = jobs[pid] = _Job(token, exit_file, go_w, status_r, join is not None)
        starting[status_r] = pid
        poller.register(status_r, select.POLLIN)
        if join is None:
            tell(("forked", token, pid))
            return
        try:
            for path in join:
                write_pid(path, pid)
        except OSError as exc:
            job.chunks.append(f"preparing the job's process failed: {exc}".encode())
            release(pid, False)  # it exits without running anything; its reason is told with its start
            return
        release(pid, True)

    def direct(token: int, plan: Plan, exit_file: str, join: tuple[str, ...], home: tuple[str, ...]) -> None:
        """A start without a fork: this process enters the job's control groups (``join``), starts
        the command there, and goes back to its own (``home``, one per hierarchy, beside the jobs')."""
        def enter() -> None:
            try:
                for path in join:
                    write_pid(path, me)
            except OSError as exc:
                leave()
                raise Refused(f"preparing the job's process failed: {exc}") from None

        def leave() -> None:
            # It must not stay a member: the job's end would kill it, its limits would bind it. Its own
            # group is where it has just come from, so this fails only if somebody removed that group:
            # then this process ends (RuntimeError is not caught), and its worker starts another.
            try:
                for path in home:
                    write_pid(path, me)
            except OSError as exc:
                raise RuntimeError(f"the spawner cannot go back to its own control group: {exc}") from None

        try:
            pid = spawn(plan, here, enter, leave)
        except Refused as exc:
            tell(("spawned", token, None, str(exc)))
            return
        except OSError as exc:
            tell(("spawned", token, None, f"cannot start a process on this host: {exc.strerror}"))
            return
        jobs[pid] = _Job(token, exit_file, -1, -1, True)
        tell(("spawned", token, pid, None))

    def told_started(pid: int, job: _Job) -> None:
        reason = b"".join(job.chunks).decode(errors="replace") or None
        tell(("spawned", job.token, pid, reason) if job.spawned else ("started", pid, reason))

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
                told_started(pid, job)  # nothing written: its command ran (and has ended already)
            tell(("exit", pid, status))

    while connected or jobs:
        for fd, _ in poller.poll():
            if fd == wake_r:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            elif fd == sock:
                try:
                    data = os.read(sock, _MAX_MSG)
                    msg = marshal.loads(data) if data else None
                except (OSError, ValueError, EOFError):
                    msg = None
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
                elif msg[0] == "spawn":
                    start(msg[1], msg[2], msg[3], tuple(msg[4]), None if msg[5] is None else tuple(msg[5]))
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
                told_started(pid, job)
        reap()


def main(argv: list[str]) -> None:
    sock = int(argv[0])
    os.set_inheritable(sock, False)
    try:
        serve(sock)
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
