"""Jobs per (queue, state), kept in memory as jobs move, like the slots (:mod:`xce.controller.hosts.slots`).

``/metrics``, the dashboard and the queue views need these counts on every request; counting the
jobs table each time grows with the number of jobs ever kept. They are counted once from the store
at start (and after a rolled-back transaction) and then changed only here: by every move
(:meth:`xce.controller.service.Controller.move`), a submission, a queue change and the pruning of
old finished jobs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa

from xce.controller.store.schema import jobs


class JobCounts(Counter):
    def reload(self, conn: sa.engine.Connection) -> None:
        self.clear()
        for queue, state, n in conn.execute(sa.select(jobs.c.queue, jobs.c.state, sa.func.count())
                                            .group_by(jobs.c.queue, jobs.c.state)):
            self[(queue, state)] = n

    def moved(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        queue = job["queue"]
        self[(queue, old)] -= 1
        self[(queue, new)] += 1

    def added(self, queue: str, state: str, n: int = 1) -> None:
        self[(queue, state)] += n

    def removed(self, queue: str, state: str, n: int = 1) -> None:
        self[(queue, state)] -= n

    def queue_changed(self, state: str, old_queue: str, new_queue: str) -> None:
        """A job changed queue (``xce modify -q``), staying in ``state``."""
        self[(old_queue, state)] -= 1
        self[(new_queue, state)] += 1
