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
from collections.abc import Callable

#: Close-on-exec: a forked child moves them to 1 and 2 (``dup2`` clears the flag there), and a
#: process started by :func:`spawn` gets only its 0, 1 and 2.
_OUTPUT_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                 | os.O_CLOEXEC)
#: ``--open-mode=truncate`` (sbatch's default, bsub -oo): the file starts empty, and is still
#: written at the end (two processes of the job writing it do not overwrite each other).
_TRUNCATE_FLAGS = _OUTPUT_FLAGS | os.O_TRUNC
#: A job finds every signal at its default disposition: an ignored signal survives ``execve`` (Python
#: ignores SIGPIPE and SIGXFSZ; whatever started the worker may have ignored others). glibc and Python
#: refuse to touch signals 32 and 33, which glibc keeps for itself, so on the architectures whose
#: numbers we know the reset is the raw ``rt_sigaction`` call, for every signal.
_SYS_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(os.uname().machine)
_LIBC = ctypes.CDLL(None, use_errno=True) if _SYS_RT_SIGACTION is not None else None
_SIG_DFL_ACTION = ctypes.create_string_buffer(32)  # handler SIG_DFL (0), no flags, empty mask
_ALL_SIGNALS = tuple(s for s in range(1, getattr(signal, "NSIG", 65)) if s not in (signal.SIGKILL, signal.SIGSTOP))
_VALID_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))


#: ``posix_spawn`` as the C library offers it, not as ``os.posix_spawn`` does: to start a job with
#: every signal at its default, its attributes must name 32 and 33 too, which Python's signal sets
#: cannot hold (glibc's own posix_spawn leaves those two ignored in the new program otherwise).
#: Flags from <spawn.h> (the same in glibc and musl); the attribute and file-action objects are
#: opaque, and smaller than _OPAQUE bytes in every C library (336 and 80 in glibc on x86_64).
_SPAWN_SETSIGDEF, _SPAWN_SETSIGMASK, _SPAWN_SETSID = 0x04, 0x08, 0x80
_OPAQUE = 1024
_SIGSET_BYTES = 128


def _spawn_attributes() -> ctypes.Array | None:
    """Every signal at its default, none blocked, a session of its own; None where the C library
    cannot (no posix_spawn, or one older than POSIX_SPAWN_SETSID: glibc 2.26)."""
    if _LIBC is None or not hasattr(_LIBC, "posix_spawn"):
        return None
    attr = ctypes.create_string_buffer(_OPAQUE)
    if (_LIBC.posix_spawnattr_init(attr)
            or _LIBC.posix_spawnattr_setflags(attr, ctypes.c_short(_SPAWN_SETSIGDEF | _SPAWN_SETSIGMASK | _SPAWN_SETSID))
            or _LIBC.posix_spawnattr_setsigdefault(attr, ctypes.create_string_buffer(b"\xff" * _SIGSET_BYTES,
                                                                                     _SIGSET_BYTES))
            or _LIBC.posix_spawnattr_setsigmask(attr, ctypes.create_string_buffer(_SIGSET_BYTES))):
        return None
    return attr


_SPAWN_ATTRIBUTES = _spawn_attributes()
#: Whether :func:`spawn` can be used here.
CAN_SPAWN = _SPAWN_ATTRIBUTES is not None


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

    __slots__ = ("argv", "env", "search", "cwd", "stdout", "stderr", "uid", "gid", "groups", "switch", "user",
                 "truncate", "fds", "tty")

    def __init__(self, argv: list[bytes], env: dict[bytes, bytes], search: list[bytes], cwd: bytes, stdout: bytes,
                 stderr: bytes, uid: int, gid: int, groups: tuple[int, ...], switch: bool, user: str,
                 truncate: bool = False, fds: tuple[int, int] | None = None) -> None:
        self.argv, self.env, self.search, self.cwd = argv, env, search, cwd
        self.stdout, self.stderr, self.truncate = stdout, stderr, truncate
        self.uid, self.gid, self.groups, self.switch, self.user, self.fds = uid, gid, groups, switch, user, fds
        #: A terminal for stdin, stdout and stderr, made the controlling one (never sent to the spawner).
        self.tty: int | None = None

    def fields(self) -> tuple:
        """What the spawner is sent (no descriptors: a task's pipes never go there)."""
        return (self.argv, self.env, self.search, self.cwd, self.stdout, self.stderr, self.uid, self.gid,
                tuple(self.groups), self.switch, self.user, self.truncate)


def write_pid(path: str, pid: int) -> None:
    """Make ``pid`` a member of a control group: one write of it to the group's ``cgroup.procs``."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, b"%d" % pid)
    finally:
        os.close(fd)


class Refused(Exception):
    """A step of the start failed; the message is the reason, for the job's owner."""


def run(plan: Plan, go_r: int, status_w: int, reset_signals: bool = True) -> None:
    """The child between ``fork`` and ``execve``. Every exit path ends in ``os._exit``.

    ``reset_signals=False``: the parent ignores no signal (the spawner resets them all when it starts),
    and the handlers it has are reset by ``execve`` itself. Every page the child writes to is copied
    from its parent's, so the less it runs here the cheaper a start is."""
    try:
        if reset_signals:
            default_signal_dispositions()
        keep = sorted({go_r, status_w, *(plan.fds or ()), *(() if plan.tty is None else (plan.tty,))})
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
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        _search(plan, lambda path: os.execve(path, plan.argv, plan.env))
    except Refused as exc:
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
        raise Refused(f"cannot switch to user {plan.user} (uid {plan.uid}): {exc.strerror}") from None
    if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (plan.uid, plan.uid, plan.gid, plan.gid):
        raise Refused(f"switching to user {plan.user} left the process with other ids; refusing to run the job")
    if plan.uid != 0:
        try:
            os.setuid(0)
        except PermissionError:
            return
        raise Refused(f"the process could regain root after switching to user {plan.user}; refusing to run the job")


def _enter(plan: Plan) -> None:
    try:
        os.chdir(plan.cwd)
    except FileNotFoundError:
        raise Refused(f"working directory {os.fsdecode(plan.cwd)} does not exist on this host") from None
    except NotADirectoryError:
        raise Refused(f"working directory {os.fsdecode(plan.cwd)} is not a directory") from None
    except OSError as exc:
        raise Refused(f"user {plan.user} cannot enter the working directory {os.fsdecode(plan.cwd)}: "
                      f"{exc.strerror}") from None


def _open_outputs(plan: Plan) -> None:
    if plan.tty is not None:
        _take_terminal(plan)
        return
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


def _take_terminal(plan: Plan) -> None:
    """The terminal as 0, 1 and 2 and as the controlling terminal of the session the child leads
    (``login_tty``: its Ctrl-C, Ctrl-Z and window changes reach the job's foreground processes)."""
    try:
        os.login_tty(plan.tty)  # type: ignore[arg-type]
    except OSError as exc:
        raise Refused(f"cannot make the job's terminal its controlling terminal as user {plan.user}: "
                      f"{exc.strerror}") from None


def _open_output(plan: Plan, path: bytes) -> int:
    shown = os.fsdecode(path)
    try:
        flags = _TRUNCATE_FLAGS if plan.truncate else _OUTPUT_FLAGS
        try:
            fd = os.open(path, flags, 0o666)
        except FileNotFoundError:  # its directory is missing: made (as the owner), then again
            parent = os.path.dirname(path)
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError as exc:
                raise Refused(f"cannot create the directory {os.fsdecode(exc.filename or parent)} for output "
                              f"file {shown} as user {plan.user}: {exc.strerror}") from None
            fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"output file {shown} is a symbolic link; output files are opened without following "
                          f"links (name the file it points to instead)") from None
        if exc.errno == errno.ENXIO:
            raise Refused(f"output file {shown} is a FIFO nobody is reading") from None
        raise Refused(f"cannot open output file {shown} as user {plan.user}: {exc.strerror}") from None
    os.set_blocking(fd, True)
    return fd


def _search(plan: Plan, start: Callable[[bytes], int]) -> int:
    """``start`` each of the command's candidate paths in turn, as ``execvp`` does: keep looking
    after "not here", remember "here but not allowed"."""
    first: OSError | None = None
    for path in plan.search:
        try:
            return start(path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR) and first is None:
                first = exc
    name = os.fsdecode(plan.argv[0])
    if first is None:
        raise Refused(f"command not found: {name}")
    if first.errno == errno.EACCES:
        raise Refused(f"cannot execute {name} as user {plan.user}: {first.strerror}")
    raise Refused(f"cannot start {name}: {first.strerror}")


def spawn(plan: Plan, here: int, enter: Callable[[], None], leave: Callable[[], None]) -> int:
    """The same steps without a fork, for a process that runs as this one's own user: its pid.

    ``posix_spawn`` starts the command from a ``vfork``-like clone that shares this process's
    memory until its ``execve``: no page tables copied and torn down, no copy-on-write faults
    (about a millisecond of CPU less per job on a 2-CPU VM, two thirds of a ``true`` job's cost).
    With no identity to switch, this process can take the owner's steps itself, in the same order:
    the working directory (``here``, a descriptor of its own, is where it goes back), the outputs
    (close-on-exec, so the job gets its 0, 1 and 2 and nothing else), then, between ``enter`` and
    ``leave`` (into the job's control groups and back, so that the process is born a member and
    can fork nothing outside them), the command in a session of its own with every signal at its
    default and none blocked. Raises :class:`Refused` with the reason, having started nothing."""
    out = err = -1
    actions = ctypes.create_string_buffer(_OPAQUE)
    _LIBC.posix_spawn_file_actions_init(actions)  # type: ignore[union-attr]
    try:
        _enter(plan)
        out = _open_output(plan, plan.stdout)
        err = out if plan.stderr == plan.stdout else _open_output(plan, plan.stderr)
        for rc in (_LIBC.posix_spawn_file_actions_addopen(actions, 0, b"/dev/null", os.O_RDONLY, 0),  # type: ignore
                   _LIBC.posix_spawn_file_actions_adddup2(actions, out, 1),  # type: ignore[union-attr]
                   _LIBC.posix_spawn_file_actions_adddup2(actions, err, 2)):  # type: ignore[union-attr]
            if rc:
                raise OSError(rc, os.strerror(rc))
        argv = (ctypes.c_char_p * (len(plan.argv) + 1))(*plan.argv, None)
        envp = (ctypes.c_char_p * (len(plan.env) + 1))(*(k + b"=" + v for k, v in plan.env.items()), None)
        pid = ctypes.c_int()

        def start(path: bytes) -> int:
            rc = _LIBC.posix_spawn(ctypes.byref(pid), path, actions, _SPAWN_ATTRIBUTES, argv, envp)  # type: ignore
            if rc:
                raise OSError(rc, os.strerror(rc), path)
            return pid.value

        enter()
        try:
            return _search(plan, start)
        finally:
            leave()
    finally:
        _LIBC.posix_spawn_file_actions_destroy(actions)  # type: ignore[union-attr]
        for fd in {out, err} - {-1}:
            os.close(fd)
        os.fchdir(here)
