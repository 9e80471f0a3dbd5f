"""Small readers and writers of cgroup interface files, shared by the v1 and v2 layers.

Only the worker (root) opens these files, and only files under the directories it created: a job's
own paths are never touched with the worker's rights.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from pathlib import Path

from xce.procs import pid_alive

log = logging.getLogger("xce.worker")


# Plain file descriptors rather than open(): every job start writes its pid into one cgroup.procs
# per hierarchy, and a text-mode file object (buffer, codec, pathlib) cost more than the write.

def write(path: str | os.PathLike[str], value: str) -> None:
    """One write(2) of ``value``: the kernel takes an interface file's value from a single write."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def read(path: str | os.PathLike[str]) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    except OSError:
        return None
    finally:
        os.close(fd)


def read_int(path: Path) -> int | None:
    text = read(path)
    try:
        return int(text.split()[0]) if text else None
    except ValueError:
        return None


def keyed(path: Path) -> dict[str, int]:
    """``name value`` lines (memory.stat, memory.events, cpu.stat, memory.oom_control)."""
    out: dict[str, int] = {}
    for line in (read(path) or "").splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return out


def procs(path: str | os.PathLike[str]) -> list[int]:
    """The live, non-zombie pids listed in ``path`` (a ``cgroup.procs`` file)."""
    out = []
    for word in (read(path) or "").split():
        try:
            pid = int(word)
        except ValueError:
            continue
        if pid_alive(pid):
            out.append(pid)
    return out


def rmdir(path: str | os.PathLike[str], tries: int = 50, quiet: bool = False) -> bool:
    """Remove one cgroup directory. The kernel refuses while processes are in it, and lets go of
    a group a moment after its last member died, so a busy group is retried for a while."""
    for attempt in range(tries):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if attempt == tries - 1 or exc.errno != errno.EBUSY:
                if quiet:
                    return False
                log.warning("cannot remove control group %s: %s", path, os.strerror(exc.errno or errno.EIO))
                return False
            time.sleep(0.01)
    return False


def job_ids(base: Path) -> list[int]:
    out = []
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for name in entries:
        if name.startswith("job_") and name[4:].isdigit() and (base / name).is_dir():
            out.append(int(name[4:]))
    return out
