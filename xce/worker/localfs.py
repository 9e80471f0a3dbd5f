"""Whether a path lies on a file system that answers: one of this host's own disks or memory.

The spawner starts a job without a fork (:func:`xce.worker.child.spawn`) by taking the job's file
system steps itself: entering its working directory, opening its outputs, and, in a clone that
shares its memory and stops it until the ``execve``, looking up the command. On a network file
system that stopped answering (an NFS server gone, with a hard mount) any of those waits forever,
and a spawner that waits starts nothing more for anybody on its host. A forked child waits alone
(and is killed when its start times out), so a job whose paths touch anything but a local file
system is forked. Deciding must not touch those file systems either: a path is followed one
component at a time, each looked at only once the mount table says it is local (symbolic links
included, so that ``/home`` pointing into an NFS mount is seen as NFS).
"""

from __future__ import annotations

import os
import stat
import time

#: File systems that live on this host's disks or memory; anything else (nfs, cifs, ceph, lustre,
#: gpfs, fuse.*, autofs, 9p, ...) may block, and so may a type not listed here.
LOCAL = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "jfs", "reiserfs", "tmpfs", "ramfs",
                   "devtmpfs", "overlay", "squashfs", "vfat", "exfat", "proc", "sysfs"})
MOUNTINFO = "/proc/self/mountinfo"
_REREAD_S = 1.0
_MAX_LINKS = 40

_mounts: list[tuple[bytes, bool]] = []  # (mount point, local), the longest first
_read_at = -_REREAD_S
_known: dict[bytes, bool] = {}  # path -> is_local, for as long as the table it was found with


def _unescape(raw: bytes) -> bytes:
    """mountinfo writes space, tab, newline and backslash in octal (``\\040``)."""
    if b"\\" not in raw:
        return raw
    out, i = bytearray(), 0
    while i < len(raw):
        if raw[i:i + 1] == b"\\" and raw[i + 1:i + 4].isdigit():
            out.append(int(raw[i + 1:i + 4], 8))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def mount_table(path: str = MOUNTINFO) -> list[tuple[str, str, set[str]]]:
    """(type, mount point, super options) of each mount in a ``mountinfo`` file, in its order (a
    later mount over the same point hides an earlier one); empty if it cannot be read. A mount point
    that is not UTF-8 comes back as :func:`os.fsdecode` makes it, so :func:`os.fsencode` restores it."""
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        left, _, right = line.partition(b" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        out.append((rest[0].decode(errors="replace"), os.fsdecode(_unescape(fields[4])),
                    set(rest[2].decode(errors="replace").split(","))))
    return out


def _table() -> list[tuple[bytes, bool]]:
    """The mount points and whether each is local, read again at most every second (a mount made
    since is seen within that second; before it exists no job can name a path on it)."""
    global _mounts, _read_at, _known
    now = time.monotonic()
    if now - _read_at >= _REREAD_S:
        table = {os.fsencode(point): fstype in LOCAL for fstype, point, _ in mount_table()}  # the last one wins
        _mounts = sorted(((p.rstrip(b"/") + b"/", local) for p, local in table.items()), key=lambda m: -len(m[0]))
        _read_at, _known = now, {}
    return _mounts


def _local(table: list[tuple[bytes, bool]], path: bytes) -> bool:
    """Whether the mount ``path`` is on is local (the longest mount point that contains it)."""
    path = path.rstrip(b"/") + b"/"
    for point, local in table:
        if path.startswith(point):
            return local
    return False


def is_local(path: bytes, cwd: bytes = b"/") -> bool:
    """Whether every file system ``path`` (relative to ``cwd``) passes through is local. A component
    that does not exist ends the walk (the step that needs it fails at once, for the same reason)."""
    table = _table()
    full = os.path.join(cwd, path)
    known = _known.get(full)
    if known is None:
        known = _known[full] = bool(table) and _walk(table, full)
        if len(_known) > 10_000:
            _known.clear()
    return known


def _walk(table: list[tuple[bytes, bool]], full: bytes) -> bool:
    todo = [c for c in full.split(b"/") if c]
    here = b"/"
    links = 0
    while True:
        if not _local(table, here):
            return False
        if not todo:
            return True
        part = todo.pop(0)
        if part == b".":
            continue
        if part == b"..":
            here = os.path.dirname(here)
            continue
        nxt = os.path.join(here, part)
        if not _local(table, nxt):  # a mount point on this very component
            return False
        try:
            st = os.lstat(nxt)
        except OSError:
            return True
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > _MAX_LINKS:
                return True  # ELOOP, at once, wherever the walk goes
            try:
                target = os.readlink(nxt)
            except OSError:
                return True
            todo[:0] = [c for c in target.split(b"/") if c]
            if target.startswith(b"/"):
                here = b"/"
            continue
        here = nxt
