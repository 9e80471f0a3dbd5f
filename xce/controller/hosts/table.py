"""The registered hosts as the controller holds them in memory, with what it knows of their workers.

Every worker request (heartbeats, reports, polls for actions) looks its host up, and the liveness
check scans them all every second, so the table lives in memory and mirrors the ``hosts`` rows:
read from the store at start (and after a rolled-back transaction, keeping each host's liveness
clock), changed by :mod:`xce.controller.hosts.fleet` as workers register, report and are given up.
What only the running worker says (its task server, what it can enforce) is not stored: a restarted
controller learns it again when the worker registers.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from xce.controller.store.schema import hosts


@dataclass
class HostLive:
    """A registered host as the controller holds it in memory (mirrors the ``hosts`` row)."""

    name: str
    status: str
    resources: dict[str, Any]
    load: dict[str, Any]
    registered: int
    last_seen_ns: int
    #: Monotonic time of the last report; liveness uses it so a wall-clock jump cannot kill hosts.
    seen_mono: float = field(default_factory=time.monotonic)
    #: What holds its jobs together (``cgroup-v2``, ``cgroup-v1``, ``process-group``), as registered.
    containment: str | None = None
    #: Why an administrator closed the host (no new jobs); None while it is open.
    closed: str | None = None
    #: HOST:PORT of its task server (``xce launch``), as registered; not stored (a restarted
    #: controller learns it again when the worker registers).
    task_address: str | None = None
    #: Provider resources its worker can hold a job to (``--limit NAME=N``), as registered; not
    #: stored, like ``task_address``.
    enforces: tuple[str, ...] = ()
    #: Features its worker registered with (``xce worker --feature``); the configuration's are added
    #: by ``Controller.host_values``.
    features: tuple[str, ...] = ()

    @property
    def scheduling_status(self) -> str:
        """What the scheduler is told: only ``ok`` hosts get new jobs, so a closed one says so."""
        return "closed" if self.closed is not None and self.status == "ok" else self.status


class HostTable(dict[str, HostLive]):
    """Host name -> :class:`HostLive`."""

    def __init__(self) -> None:
        super().__init__()
        #: Hosts known to have no action queued at all: their polls answer from memory, without a
        #: transaction (an idle fleet's polls cost next to nothing). A commit that queues an action
        #: for a host takes it out; a reload forgets them all.
        self.quiet: set[str] = set()

    def reload(self, conn: sa.engine.Connection) -> None:
        """The hosts as stored; a host already known keeps its liveness clock (a rollback is no report)."""
        old = dict(self)
        self.clear()
        self.quiet = set()
        for r in conn.execute(sa.select(hosts)).mappings():
            live = HostLive(r["name"], r["status"], json.loads(r["resources"]), json.loads(r["load"]),
                            r["registered"], r["last_seen"], containment=r["containment"], closed=r["closed"],
                            features=tuple(json.loads(r["features"] or "[]")))
            if r["name"] in old:
                live.seen_mono = old[r["name"]].seen_mono
            self[r["name"]] = live

    def forget(self) -> None:
        """A new term: every host gets a full worker timeout of grace from now, as after a restart."""
        self.clear()
        self.quiet = set()
