"""A job's process between ``fork`` and ``execve``: the steps it takes, and nothing else.

The worker forks the processes of tasks itself and the spawner (:mod:`xce.worker.spawnd`) those of
jobs; either way the child runs :func:`run` and imports nothing more. This module imports little,
on purpose: the spawner is a process of its own that loads only this, and every page of a parent
is a page each fork copies the tables of and tears down again (a spawner of 15 MB cost each
``true`` job twice the CPU of one of 9 MB). The sequence and why it is safe are described in
:mod:`xce.worker.launch`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal

_OUTPUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
#: A job finds every signal at its default disposition: an ignored signal survives ``execve`` (Python
#: ignores SIGPIPE and SIGXFSZ; whatever started the worker may have ignored others). glibc and Python
#: refuse to touch signals 32 and 33, which glibc keeps for itself, so on the architectures whose
#: numbers we know the reset is the raw ``rt_sigaction`` call, for every signal.
_SYS_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(os.uname().machine)
_LIBC = ctypes.CDLL(None, use_errno=True) if _SYS_RT_SIGACTION is not None else None
_SIG_DFL_ACTION = ctypes.create_string_buffer(32)  # handler SIG_DFL (0), no flags, empty mask
_ALL_SIGNALS = tuple(s for s in range(1, getattr(signal, "NSIG", 65)) if s not in (signal.SIGKILL, signal.SIGSTOP))
_VALID_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))


def default_signal_dispositions() -> None:
    if _LIBC is not None:
        for sig in _ALL_SIGNALS:
            _LIBC.syscall(_SYS_RT_SIGACTION, sig, _SIG_DFL_ACTION, None, 8)
        return
    for sig in _VALID_SIGNALS:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass


class Plan:
    """Everything the child needs, as bytes and integers, so that it only makes system calls."""

    __slots__ = ("argv", "env", "search", "cwd", "stdout", "stderr", "uid", "gid", "groups", "switch", "user", "fds")

    def __init__(self, argv: list[bytes], env: dict[bytes, bytes], search: list[bytes], cwd: bytes, stdout: bytes,
                 stderr: bytes, uid: int, gid: int, groups: tuple[int, ...], switch: bool, user: str,
                 fds: tuple[int, int] | None = None) -> None:
        self.argv, self.env, self.search, self.cwd = argv, env, search, cwd
        self.stdout, self.stderr = stdout, stderr
        self.uid, self.gid, self.groups, self.switch, self.user, self.fds = uid, gid, groups, switch, user, fds

    def fields(self) -> tuple:
        """What the spawner is sent (no descriptors: a task's pipes never go there)."""
        return (self.argv, self.env, self.search, self.cwd, self.stdout, self.stderr, self.uid, self.gid,
                tuple(self.groups), self.switch, self.user)


class _Refused(Exception):
    pass


def run(plan: Plan, go_r: int, status_w: int, reset_signals: bool = True) -> None:
    """The child between ``fork`` and ``execve``. Every exit path ends in ``os._exit``.

    ``reset_signals=False``: the parent ignores no signal (the spawner resets them all when it starts),
    and the handlers it has are reset by ``execve`` itself. Every page the child writes to is copied
    from its parent's, so the less it runs here the cheaper a start is."""
    try:
        if reset_signals:
            default_signal_dispositions()
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


def _become(plan: Plan) -> None:
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


def _enter(plan: Plan) -> None:
    try:
        os.chdir(plan.cwd)
    except FileNotFoundError:
        raise _Refused(f"working directory {os.fsdecode(plan.cwd)} does not exist on this host") from None
    except NotADirectoryError:
        raise _Refused(f"working directory {os.fsdecode(plan.cwd)} is not a directory") from None
    except OSError as exc:
        raise _Refused(f"user {plan.user} cannot enter the working directory {os.fsdecode(plan.cwd)}: "
                       f"{exc.strerror}") from None


def _open_outputs(plan: Plan) -> None:
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


def _open_output(plan: Plan, path: bytes) -> int:
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


def _exec(plan: Plan) -> None:
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
