"""Slots held on each host, kept in memory as jobs move, like the job counts.

A job holds the slots of its placement from its dispatch until it ends or goes back to PEND,
suspended or not. The dashboard's overview, ``GET /v1/hosts`` and ``/metrics`` all need this per
host; reading it from the store meant parsing the placement of every running job on each request
(about 50 ms with 5,000 running jobs), so the controller keeps the tally instead: rebuilt from the
store at start (and after a rolled-back transaction), updated by ``Controller.move``, the one place
every state change goes through. A host that runs an exclusive job is closed to every other job
while it does (the scheduler charges the job all of its slots): the tally knows which job that is,
so views show the host full and say why, as LSF's ``closed_Excl`` does.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from xce.controller.store.schema import jobs

#: States in which a job holds the slots of its placement.
HOLDING = ("RUN", "SSUSP", "USUSP", "UNKWN")


class SlotTally:
    def __init__(self) -> None:
        self._placed: dict[int, list[tuple[str, int]]] = {}
        self._hosts: dict[str, list[int]] = {}  # host -> [slots, jobs]
        self._exclusive: dict[str, int] = {}  # host -> the exclusive job running there

    def reload(self, conn: sa.engine.Connection) -> None:
        self._placed, self._hosts, self._exclusive = {}, {}, {}
        for jobid, text, exclusive in conn.execute(sa.select(jobs.c.id, jobs.c.placement, jobs.c.exclusive)
                                                   .where(jobs.c.state.in_(HOLDING))):
            self._add(jobid, json.loads(text) if text else [], bool(exclusive))

    def moved(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        held, holds = old in HOLDING, new in HOLDING
        if holds and not held:
            text = job.get("placement")
            self._add(job["id"], json.loads(text) if isinstance(text, str) and text else [], bool(job.get("exclusive")))
        elif held and not holds:
            for host, n in self._placed.pop(job["id"], []):
                if self._exclusive.get(host) == job["id"]:
                    del self._exclusive[host]
                use = self._hosts[host]
                use[0] -= n
                use[1] -= 1
                if use[1] <= 0:
                    del self._hosts[host]

    def _add(self, jobid: int, placement: list[list[Any]], exclusive: bool = False) -> None:
        pairs = [(str(h), int(n)) for h, n in placement]
        self._placed[jobid] = pairs
        for host, n in pairs:
            if exclusive:
                self._exclusive[host] = jobid
            use = self._hosts.setdefault(host, [0, 0])
            use[0] += n
            use[1] += 1

    def by_host(self) -> dict[str, tuple[int, int]]:
        """Slots held and jobs per host, for hosts holding any."""
        return {h: (u[0], u[1]) for h, u in self._hosts.items()}

    def exclusive_on(self, host: str) -> int | None:
        """The exclusive job that has ``host`` to itself, if one does."""
        return self._exclusive.get(host)

    def jobs_on(self, host: str) -> list[int]:
        return sorted(j for j, pairs in self._placed.items() if any(h == host for h, _ in pairs))
