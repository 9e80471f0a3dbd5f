"""Starting a process as a job's owner: the one place that knows how a job's process starts.

The worker runs as root in production, and a path a job names (output, error, working directory)
is chosen by whoever submitted it. So nothing of the job is done with the worker's rights: the
forked child first becomes the owner and only then touches the file system. The sequence, in the
child, is:

1. ``setsid``: the job gets its own session and process group, so one ``killpg`` reaches
   everything it starts and a Ctrl-C meant for the worker never reaches it;
2. wait for the parent's go. Meanwhile the parent runs the **preparation steps** it was given
   (:data:`PrepareStep`, called with the child's pid, as root): whatever must apply to the job and
   every process it will ever start, done before the job runs a single instruction and while the
   child can still be moved anywhere (a control group join, ``prlimit``, ``oom_score_adj``). The
   child has not switched identity yet, so there is no race with anything the job does;
3. the identity switch, in the order ``initgroups`` (``setgroups`` with the owner's groups,
   resolved before the fork), ``setgid``, ``setuid``; then a check that root cannot be regained;
4. as the owner: ``chdir`` to the working directory, create the output files' directories, open
   stdout and stderr (appending, never following a symbolic link at the last component, never
   blocking on a FIFO), stdin from ``/dev/null``;
5. ``execve`` of the command (searched in the job's ``PATH``, with the owner's rights).

A step that fails writes its reason to a status pipe and the child exits; the parent reads the
pipe until it closes (``O_CLOEXEC``: the ``execve`` closes it), so :func:`launch` returns only once
the command runs, or raises :class:`StartError` with a reason the owner can act on. A path the
owner may not write is refused by the kernel as it would be for the owner's own shell: the worker
never opens, creates, ``chown``s or ``chmod``s anything on the job's behalf.

**Fork safety.** The worker has threads (poster, monitor), and a forked child of a threaded
process may find any lock held by a thread that no longer exists. So everything that may take a
lock (the user database, the environment's encoding, the executable search path) is prepared
before the fork, and the child runs only plain system calls on pre-built values: no logging, no
imports, no name-service lookups, until ``execve`` replaces it. A fresh interpreter per job would
avoid the question too, but costs ~20 ms of CPU per start, which a busy host cannot afford.

**The spawner.** With ``exit_file`` set (a job's command, which must outlive a worker restart),
the fork happens in the worker's spawner (:mod:`xce.worker.spawner`), a small process that stays
the job's parent and tells the worker how it ended, or, when the worker is not there to pass that
on, writes its wait status to ``exit_file``: a worker that was killed and restarted is nobody's
parent, and learns how the jobs it adopted ended from their exit files. The child runs the same
steps either way; the worker runs the preparation steps on its pid either way.

Reused for every process a job starts on a host (its command now; the tasks of a parallel job
later): give it a :class:`LaunchSpec`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import select
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xce.worker.identity import Identity, StartError

#: Run by the worker, as root, with the child's pid, before the child switches to the owner.
PrepareStep = Callable[[int], None]

#: How long a start may take before the worker gives up on it (a hung file system, say).
START_TIMEOUT_S = 30.0

_OUTPUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
#: A job finds every signal at its default disposition: an ignored signal survives ``execve`` (Python
#: ignores SIGPIPE and SIGXFSZ; whatever started the worker may have ignored others). glibc and Python
#: refuse to touch signals 32 and 33, which glibc keeps for itself, so on the architectures whose
#: numbers we know the reset is the raw ``rt_sigaction`` call, for every signal.
_SYS_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(platform.machine())
_LIBC = ctypes.CDLL(None, use_errno=True) if _SYS_RT_SIGACTION is not None else None
_SIG_DFL_ACTION = ctypes.create_string_buffer(32)  # handler SIG_DFL (0), no flags, empty mask
_ALL_SIGNALS = tuple(s for s in range(1, getattr(signal, "NSIG", 65)) if s not in (signal.SIGKILL, signal.SIGSTOP))
_VALID_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))


def _default_signal_dispositions() -> None:
    if _LIBC is not None:
        for sig in _ALL_SIGNALS:
            _LIBC.syscall(_SYS_RT_SIGACTION, sig, _SIG_DFL_ACTION, None, 8)
        return
    for sig in _VALID_SIGNALS:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass


@dataclass(frozen=True)
class LaunchSpec:
    """Start ``argv`` as ``identity`` in ``cwd`` with ``env``, output appended to ``stdout``/``stderr``.

    ``stdout`` and ``stderr`` are absolute paths (the same path for both shares one file).
    ``identity`` with ``switch=False`` runs as the worker's own user (a personal cluster).
    """

    argv: Sequence[str]
    env: dict[str, str]
    cwd: str
    stdout: str
    stderr: str
    identity: Identity
    prepare: Sequence[PrepareStep] = field(default_factory=tuple)
    #: Already open descriptors (stdout, stderr) to use instead of the files: the pipes through
    #: which the worker forwards a task's output to ``xce launch``.
    fds: tuple[int, int] | None = None
    #: Where the spawner records the job's wait status if the worker cannot pass it on (None: the
    #: worker forks it and is its parent). Not with ``fds``: a task's pipes belong to the worker.
    exit_file: str | None = None


class Child:
    """A started process, waited for like ``subprocess.Popen`` (``poll`` gives -N for signal N)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        return self.returncode


def launch(spec: LaunchSpec) -> Child:
    """Start ``spec`` and return once its command runs; :class:`StartError` says why it could not."""
    ident = spec.identity
    argv = [os.fsencode(a) for a in spec.argv]
    if not argv or not argv[0]:
        raise StartError("the job has no command")
    env = {os.fsencode(k): os.fsencode(v) for k, v in spec.env.items()}
    search = [argv[0]] if b"/" in argv[0] else _from_first_present(
        [os.path.join(os.fsencode(d) or b".", argv[0]) for d in spec.env.get("PATH", os.defpath).split(os.pathsep)])
    plan = _Plan(argv, env, search, os.fsencode(spec.cwd), os.fsencode(spec.stdout), os.fsencode(spec.stderr),
                 ident.uid, ident.gid, ident.groups, ident.switch, ident.name, spec.fds)
    if spec.exit_file is not None:
        return _spawned(spec, plan)
    try:
        go_r, go_w = os.pipe2(os.O_CLOEXEC)
    except OSError as exc:
        raise StartError(f"cannot start a process on this host: {exc.strerror}") from None
    try:
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
    except OSError as exc:
        os.close(go_r)
        os.close(go_w)
        raise StartError(f"cannot start a process on this host: {exc.strerror}") from None
    # Signals stay blocked in the child until just before execve: no Python signal handler of the
    # worker may run there (it could wait on a lock a vanished thread held).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        pid = os.fork()
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in (go_r, go_w, status_r, status_w):
            os.close(fd)
        raise StartError(f"cannot start a process on this host: {exc.strerror}") from None
    if pid == 0:  # the child: never returns
        _child(plan, go_r, status_w)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(go_r)
    os.close(status_w)
    child = Child(pid)
    try:
        try:
            for step in spec.prepare:
                step(child.pid)
        except Exception as exc:
            raise StartError(f"preparing the job's process failed: {exc}") from None
        os.write(go_w, b"g")
        os.close(go_w)
        go_w = -1
        reason = _read_status(status_r, child)
    except BaseException:
        _abandon(child)
        raise
    finally:
        if go_w >= 0:
            os.close(go_w)
        os.close(status_r)
    if reason is not None:
        child.wait(5.0)
        raise StartError(reason)
    return child


def _from_first_present(candidates: list[bytes]) -> list[bytes]:
    """The ``PATH`` candidates from the first that may exist on: the ones before it do not exist for
    anybody (the worker sees ENOENT), so the child need not try them. Whether the owner may run it is
    still for the child's ``execve`` to find out, as the owner; a path the worker cannot look at (a
    root-squashed NFS directory) stays a candidate, and so does a relative one (it is relative to the
    job's working directory, not the worker's)."""
    for i, path in enumerate(candidates):
        if not path.startswith(b"/"):
            return candidates[i:]
        try:
            os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            pass
        return candidates[i:]
    return []


def _spawned(spec: LaunchSpec, plan: "_Plan") -> Child:
    """The same start, forked by the worker's spawner (:mod:`xce.worker.spawner`), which stays the
    process's parent (and the keeper of its wait status, see ``spec.exit_file``)."""
    from xce.worker import spawner

    sp = spawner.shared()
    child = spawner.SpawnedChild(sp, sp.fork(plan, spec.exit_file))  # type: ignore[arg-type]
    try:
        try:
            for step in spec.prepare:
                step(child.pid)
        except Exception as exc:
            sp.go(child.pid, False)
            raise StartError(f"preparing the job's process failed: {exc}") from None
        reason = sp.go(child.pid)
    except BaseException:
        _abandon(child)
        raise
    if reason is not None:
        child.wait(5.0)
        raise StartError(reason)
    return child


def _read_status(fd: int, child: Child) -> str | None:
    """None once the child has exec'd (the pipe closed empty); its reason when a step failed."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise StartError(f"the job's process did not start within {START_TIMEOUT_S:g}s (a file system that "
                             f"does not answer?); it was killed")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        data = os.read(fd, 4096)
        if not data:
            break
        chunks.append(data)
    if not chunks:
        return None
    return b"".join(chunks).decode(errors="replace") or "the job's process failed to start"


def _abandon(child: Child) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except OSError:
            pass
    child.wait(5.0)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything the child needs, as bytes and integers, so that it only makes system calls."""

    argv: list[bytes]
    env: dict[bytes, bytes]
    search: list[bytes]
    cwd: bytes
    stdout: bytes
    stderr: bytes
    uid: int
    gid: int
    groups: tuple[int, ...]
    switch: bool
    user: str
    fds: tuple[int, int] | None = None


class _Refused(Exception):
    pass


def _child(plan: _Plan, go_r: int, status_w: int, reset_signals: bool = True) -> None:
    """The child between ``fork`` and ``execve``. Every exit path ends in ``os._exit``.

    ``reset_signals=False``: the parent ignores no signal (the spawner resets them all when it starts),
    and the handlers it has are reset by ``execve`` itself. Every page the child writes to is copied
    from its parent's, so the less it runs here the cheaper a start is."""
    try:
        if reset_signals:
            _default_signal_dispositions()
        keep = sorted({go_r, status_w, *(plan.fds or ())})
        low = 3
        for fd in keep:
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
        os.setsid()
        if os.read(go_r, 1) != b"g":  # the parent gave up (a preparation step failed)
            os._exit(126)
        os.close(go_r)
        if plan.switch:
            _become(plan)
        _enter(plan)
        _open_outputs(plan)
        _exec(plan)
    except _Refused as exc:
        _report(status_w, str(exc))
    except BaseException as exc:  # anything else: still a reason, never a traceback in the worker
        _report(status_w, f"the job's process failed to start: {exc}")
    os._exit(127)


def _report(fd: int, message: str) -> None:
    data = message.encode(errors="replace")
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass


def _become(plan: _Plan) -> None:
    """initgroups, setgid, setuid, in that order; then make sure root cannot come back."""
    try:
        os.setgroups(list(plan.groups))
        os.setgid(plan.gid)
        os.setuid(plan.uid)
    except OSError as exc:
        raise _Refused(f"cannot switch to user {plan.user} (uid {plan.uid}): {exc.strerror}") from None
    if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (plan.uid, plan.uid, plan.gid, plan.gid):
        raise _Refused(f"switching to user {plan.user} left the process with other ids; refusing to run the job")
    if plan.uid != 0:
        try:
            os.setuid(0)
        except PermissionError:
            return
        raise _Refused(f"the process could regain root after switching to user {plan.user}; refusing to run the job")


def _enter(plan: _Plan) -> None:
    try:
        os.chdir(plan.cwd)
    except FileNotFoundError:
        raise _Refused(f"working directory {os.fsdecode(plan.cwd)} does not exist on this host") from None
    except NotADirectoryError:
        raise _Refused(f"working directory {os.fsdecode(plan.cwd)} is not a directory") from None
    except OSError as exc:
        raise _Refused(f"user {plan.user} cannot enter the working directory {os.fsdecode(plan.cwd)}: "
                       f"{exc.strerror}") from None


def _open_outputs(plan: _Plan) -> None:
    stdin = os.open(b"/dev/null", os.O_RDONLY)
    if plan.fds is not None:
        out, err = plan.fds
    else:
        out = _open_output(plan, plan.stdout)
        err = out if plan.stderr == plan.stdout else _open_output(plan, plan.stderr)
    os.dup2(stdin, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in {stdin, out, err}:
        if fd > 2:
            os.close(fd)


def _open_output(plan: _Plan, path: bytes) -> int:
    shown = os.fsdecode(path)
    try:
        try:
            fd = os.open(path, _OUTPUT_FLAGS, 0o666)
        except FileNotFoundError:  # its directory is missing: made (as the owner), then again
            parent = os.path.dirname(path)
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError as exc:
                raise _Refused(f"cannot create the directory {os.fsdecode(exc.filename or parent)} for output "
                               f"file {shown} as user {plan.user}: {exc.strerror}") from None
            fd = os.open(path, _OUTPUT_FLAGS, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Refused(f"output file {shown} is a symbolic link; output files are opened without following "
                           f"links (name the file it points to instead)") from None
        if exc.errno == errno.ENXIO:
            raise _Refused(f"output file {shown} is a FIFO nobody is reading") from None
        raise _Refused(f"cannot open output file {shown} as user {plan.user}: {exc.strerror}") from None
    os.set_blocking(fd, True)
    return fd


def _exec(plan: _Plan) -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    first: OSError | None = None
    for path in plan.search:
        try:
            os.execve(path, plan.argv, plan.env)
        except OSError as exc:
            # As execvp does: keep looking after "not here", remember "here but not allowed".
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR) and first is None:
                first = exc
    name = os.fsdecode(plan.argv[0])
    if first is None:
        raise _Refused(f"command not found: {name}")
    if first.errno == errno.EACCES:
        raise _Refused(f"cannot execute {name} as user {plan.user}: {first.strerror}")
    raise _Refused(f"cannot start {name}: {first.strerror}")
