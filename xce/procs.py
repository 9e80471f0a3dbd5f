"""Whether a process is still there: gone, a zombie and a reused pid all count as no.

One answer for everyone who holds a pid (the local cluster's supervisor, the HA lease's holder on
this host, a cgroup's members, a job the worker started), because copies answered differently:
one counted a zombie as alive, one a pid it was not allowed to signal as dead. Read from
``/proc/PID/stat`` without psutil's objects around it; where ``/proc`` hides the process (another
user's, under ``hidepid``), the kernel's answer to signal 0 decides.
"""

from __future__ import annotations

import os

#: How far apart two readings of one process's start time may be (clock ticks, float rounding).
SAME_START_S = 0.05


def pid_alive(pid: int, started: float | None = None) -> bool:
    """``pid`` is a running process, not a zombie left for its parent to reap; with ``started``
    (its :func:`process_start` when the pid was recorded) also the very same process, not another
    that was given the pid since."""
    if pid <= 0:  # 0 and -1 would ask about a process group, not a process
        return False
    fields = _stat(pid)
    if fields is None:
        if started is not None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    if fields[0] in (b"Z", b"X"):
        return False
    return started is None or abs(_start(fields) - started) < SAME_START_S


def process_start(pid: int) -> float | None:
    """When the live process ``pid`` started, in seconds since the epoch (None: there is none, or
    only its zombie): with the pid, an identity no other process has while this one lives. The
    figure psutil's ``create_time`` gives."""
    fields = _stat(pid) if pid > 0 else None
    if fields is None or fields[0] in (b"Z", b"X"):
        return None
    return _start(fields)


def _stat(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces and ``)``)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            fields = os.read(fd, 4096).rsplit(b")", 1)[1].split()
        finally:
            os.close(fd)
    except (OSError, IndexError):
        return None
    return fields or None


def _start(fields: list[bytes]) -> float:
    return int(fields[19]) / _CLOCK_TICKS + _boot_time()


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_BOOT: list[float] = []


def _boot_time() -> float:
    """The kernel's ``btime`` (what psutil's ``boot_time`` reads), once per process."""
    if not _BOOT:
        with open("/proc/stat", "rb") as f:
            _BOOT.append(next(float(line.split()[1]) for line in f if line.startswith(b"btime")))
    return _BOOT[0]
