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
steps either way; the worker runs the preparation steps on its pid either way. A job whose only
preparation is its control groups' join, that runs as the spawner's own user and whose paths are
all on local file systems is not forked at all: the spawner takes the same steps itself (there is
no identity to switch) and starts the command with ``posix_spawn`` from inside the job's groups
(:func:`xce.worker.child.spawn`), a millisecond of CPU less per job than a fork.

Reused for every process a job starts on a host (its command now; the tasks of a parallel job
later): give it a :class:`LaunchSpec`.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xce.worker.child import Plan, run, write_pid
from xce.worker.identity import Identity, StartError
from xce.worker.started import START_TIMEOUT_S, Child

#: Run by the worker, as root, with the child's pid, before the child switches to the owner.
PrepareStep = Callable[[int], None]


class Join:
    """The preparation step every job has: its pid written into each of ``files`` (the
    ``cgroup.procs`` of its control groups). Being only that, the spawner can do it itself, in the
    same exchange as the fork: one round trip with it per start instead of two. ``home``: the
    spawner's own groups (:meth:`~xce.worker.containment.base.Containment.home_files`), where a job
    that runs as the worker's own user may be started from inside its groups, without a fork."""

    __slots__ = ("files", "home")

    def __init__(self, files: tuple[str, ...], home: tuple[str, ...] | None = None) -> None:
        self.files, self.home = files, home

    def __call__(self, pid: int) -> None:
        for path in self.files:
            write_pid(path, pid)

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
    #: Output files start empty (``--open-mode=truncate``) instead of being appended to.
    truncate: bool = False
    #: A terminal (the far side of a pseudo-terminal, :func:`terminal`) as the process's stdin, stdout,
    #: stderr and controlling terminal: an interactive job (:mod:`xce.worker.interactive`). Not with
    #: ``exit_file``: the worker keeps the near side, so the job cannot outlive it anyway.
    tty: int | None = None


def launch(spec: LaunchSpec) -> Child:
    """Start ``spec`` and return once its command runs; :class:`StartError` says why it could not."""
    ident = spec.identity
    argv = [os.fsencode(a) for a in spec.argv]
    if not argv or not argv[0]:
        raise StartError("the job has no command")
    env = {os.fsencode(k): os.fsencode(v) for k, v in spec.env.items()}
    search = [argv[0]] if b"/" in argv[0] else \
        [os.path.join(os.fsencode(d) or b".", argv[0]) for d in spec.env.get("PATH", os.defpath).split(os.pathsep)]
    if not ident.switch:  # the PATH is the owner's: only a process that runs as the owner may look through it
        search = _from_first_present(search)
    plan = Plan(argv, env, search, os.fsencode(spec.cwd), os.fsencode(spec.stdout), os.fsencode(spec.stderr),
                 ident.uid, ident.gid, ident.groups, ident.switch, ident.name, truncate=spec.truncate, fds=spec.fds)
    plan.tty = spec.tty
    if spec.exit_file is not None and spec.tty is None:
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
        run(plan, go_r, status_w)
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


def terminal(ident: Identity) -> tuple[int, int]:
    """A new pseudo-terminal for a job: (near side, kept by the worker; far side, for
    :attr:`LaunchSpec.tty`). The far side's device is its owner's, group ``tty``, mode 0620, as
    ``sshd`` and ``login`` leave it: what the job runs may check or reopen it (``tty``, ``mesg``,
    ``script``), and nobody else may read it."""
    import fcntl
    import grp
    import struct
    import termios

    try:
        near, far = os.openpty()
    except OSError as exc:
        raise StartError(f"cannot open a terminal for the job on this host: {exc.strerror}") from None
    try:
        fcntl.ioctl(near, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # until its user says
        if ident.switch:
            try:
                group = grp.getgrnam("tty").gr_gid
            except KeyError:
                group = ident.gid
            os.fchown(far, ident.uid, group)
            os.fchmod(far, 0o620)
    except OSError as exc:
        os.close(near)
        os.close(far)
        raise StartError(f"cannot give the job's terminal to user {ident.name}: {exc.strerror}") from None
    return near, far


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


def _spawned(spec: LaunchSpec, plan: Plan) -> Child:
    """The same start, forked by the worker's spawner (:mod:`xce.worker.spawner`), which stays the
    process's parent (and the keeper of its wait status, see ``spec.exit_file``)."""
    from xce.worker import spawner

    sp = spawner.shared()
    joins = [step for step in spec.prepare if isinstance(step, Join)]
    if len(joins) == len(spec.prepare):
        homes = [j.home for j in joins]
        home = None if not joins or None in homes else tuple(h for hs in homes for h in hs or ())
        pid, reason = sp.spawn(plan, spec.exit_file, tuple(f for j in joins for f in j.files), home)  # type: ignore
        child = spawner.SpawnedChild(sp, pid)
        if reason is not None:
            child.wait(5.0)
            raise StartError(reason)
        return child
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
