"""Job containment: every process of a job held together, limited and killed as one.

Three implementations behind one interface (:class:`Containment`), chosen once when the worker
starts (:func:`detect`): control groups v2 where the unified hierarchy has the ``memory``
controller, v1 where the ``memory`` hierarchy is writable, and process groups where neither is
(a worker that is not root). The worker logs which one it uses and registers it, so that ``xce
hosts -l`` shows it.
"""

from __future__ import annotations

import os
from pathlib import Path

from xce.worker.containment.base import Containment, Limits, Usage
from xce.worker.containment.pgroup import ProcessGroup
from xce.worker.containment.v1 import CONTROLLERS as V1_CONTROLLERS, CgroupV1
from xce.worker.containment.v2 import CgroupV2
from xce.worker.localfs import MOUNTINFO, mount_table

__all__ = ["Containment", "ContainmentError", "Limits", "Usage", "KINDS", "detect", "CgroupV1", "CgroupV2",
           "ProcessGroup"]

KINDS = ("auto", "cgroup-v2", "cgroup-v1", "process-group")
DEFAULT_PARENT = "xce"


class ContainmentError(Exception):
    """The containment asked for cannot be had on this host (the message says why)."""


def detect(worker: str, *, kind: str = "auto", parent: str = DEFAULT_PARENT, freeze: bool = False,
           mountinfo: str = MOUNTINFO, own: str = "/proc/self/cgroup") -> Containment:
    """The best containment this host offers (or exactly ``kind``; :class:`ContainmentError` if not)."""
    if kind not in KINDS:
        raise ContainmentError(f"unknown containment {kind!r}: expected one of {', '.join(KINDS)}")
    mounts = mount_table(mountinfo)
    groups = _own_groups(own)
    why: list[str] = []
    if kind in ("auto", "cgroup-v2"):
        found = _v2(mounts, worker, parent, freeze, why)
        if found is not None or kind == "cgroup-v2":
            return found or _refuse(kind, why)
    if kind in ("auto", "cgroup-v1"):
        found = _v1(mounts, groups, worker, parent, freeze, why)
        if found is not None or kind == "cgroup-v1":
            return found or _refuse(kind, why)
    return ProcessGroup("; ".join(why) if kind == "auto" else "as configured")


def _refuse(kind: str, why: list[str]) -> Containment:
    raise ContainmentError(f"containment {kind} is not available on this host: {'; '.join(why)}")


def _v2(mounts: list[tuple[str, str, set[str]]], worker: str, parent: str, freeze: bool,
        why: list[str]) -> CgroupV2 | None:
    roots = [m for fstype, m, _ in mounts if fstype == "cgroup2"]
    if not roots:
        why.append("no cgroup v2 mount")
        return None
    for root in roots:
        ctl = set(_read(Path(root) / "cgroup.controllers").split())
        if "memory" not in ctl:
            why.append(f"cgroup v2 at {root} has no memory controller")
            continue
        if not os.access(root, os.W_OK):
            why.append(f"cgroup v2 at {root} is not writable by this user")
            continue
        return CgroupV2(Path(root), parent, worker, freeze=freeze)
    return None


def _v1(mounts: list[tuple[str, str, set[str]]], groups: dict[str, str], worker: str, parent: str,
        freeze: bool, why: list[str]) -> CgroupV1 | None:
    bases: dict[str, Path] = {}
    for fstype, mount, opts in mounts:
        if fstype != "cgroup":
            continue
        for c in V1_CONTROLLERS:
            if c in opts and c not in bases:
                own = groups.get(c, "/").strip("/")
                here = Path(mount) / own if own else Path(mount)
                if os.access(here, os.W_OK):
                    bases[c] = here.joinpath(*[p for p in parent.strip("/").split("/") if p], worker)
    if "memory" not in bases:
        why.append("no writable cgroup v1 memory hierarchy")
        return None
    return CgroupV1(bases, freeze=freeze, depth=1 + len([p for p in parent.strip("/").split("/") if p]))


def _own_groups(path: str) -> dict[str, str]:
    """controller -> this process's group in that v1 hierarchy (``/proc/self/cgroup``)."""
    out: dict[str, str] = {}
    for line in _read(Path(path)).splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for c in parts[1].split(","):
                if c:
                    out[c] = parts[2]
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
