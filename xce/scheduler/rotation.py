"""Always recording: ``[scheduler] record = "rotate"`` keeps a window of recent history on disk.

The scheduler records into ``<record dir>/rotate-<UTC time>.jsonl`` and starts a new file when the
current one reaches ``record_rotate_bytes`` or ``record_rotate_s``; each file begins with a snapshot
of the core's whole state (as every recording does), so any one of them replays on its own (``xce
scheduler --sim FILE --sim-verify``) without the ones before. Files older than ``record_keep_s`` are
deleted, then the oldest while all of them together exceed ``record_keep_bytes``; the file being
written is never deleted. An explicit ``xceadmin scheduler record start`` takes precedence: rotation
pauses while it runs and resumes after ``record stop``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "rotate-"


@dataclass(frozen=True, slots=True)
class RotationPolicy:
    rotate_bytes: int = 64 << 20
    rotate_s: float = 3600.0
    keep_s: float = 8 * 86400.0
    keep_bytes: int = 1 << 30

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> "RotationPolicy | None":
        """The policy the ``driver`` part of a CONFIG_PUSH asks for, or None when recording is off."""
        if settings.get("record") != "rotate":
            return None
        d = cls()
        return cls(rotate_bytes=int(settings.get("record_rotate_bytes") or d.rotate_bytes),
                   rotate_s=float(settings.get("record_rotate_s") or d.rotate_s),
                   keep_s=float(settings.get("record_keep_s") or d.keep_s),
                   keep_bytes=int(settings.get("record_keep_bytes") or d.keep_bytes))


def new_name(directory: str | os.PathLike[str], now_ns: int | None = None) -> Path:
    """A fresh file name that sorts in time order (nanoseconds keep two rotations in one second apart)."""
    ns = time.time_ns() if now_ns is None else now_ns
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ns // 1_000_000_000))
    return Path(directory) / f"{PREFIX}{stamp}.{ns % 1_000_000_000:09d}Z.jsonl"


def due(path: str | os.PathLike[str], opened_mono: float, policy: RotationPolicy, now_mono: float | None = None) -> bool:
    """Whether the file being written has had its share of size or time."""
    now = time.monotonic() if now_mono is None else now_mono
    if now - opened_mono >= policy.rotate_s:
        return True
    try:
        return os.path.getsize(path) >= policy.rotate_bytes
    except OSError:
        return False


def prune(directory: str | os.PathLike[str], current: str | os.PathLike[str] | None, policy: RotationPolicy,
          now: float | None = None) -> list[Path]:
    """Delete rotated files beyond the age and total size limits (oldest first); returns what went."""
    now = time.time() if now is None else now
    keep = Path(current).resolve() if current else None
    files = []
    for p in sorted(Path(directory).glob(f"{PREFIX}*.jsonl")):
        try:
            st = p.stat()
        except OSError:
            continue
        files.append((p, st.st_mtime, st.st_size))
    gone: list[Path] = []
    total = sum(size for _, _, size in files)
    for p, mtime, size in files:  # oldest first: the names sort in time order
        if keep is not None and p.resolve() == keep:
            continue
        if now - mtime > policy.keep_s or total > policy.keep_bytes:
            try:
                p.unlink()
            except OSError:
                continue
            total -= size
            gone.append(p)
    return gone
