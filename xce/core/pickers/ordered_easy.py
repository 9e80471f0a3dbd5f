"""EASY backfilling around a queue order other than first come, first served.

``easy_backfill`` offers a queue's jobs in ``builtin_fcfs`` order; the pickers built on this base
keep its reservation and backfilling rules (``constraint``, ``on_dispatch``, ``on_pend`` and the
planning of reservations are inherited unchanged) and change only the order in which jobs are
offered, so that what each of them changes is one readable rule:

- ``head_key(job, now)`` orders a queue's pending jobs. They start in that order while they fit;
  the first ones that do not fit get the queue's reservations (``reservations``, 1 = EASY).
- ``backfill_key(job, now)``, when a subclass defines it, orders the jobs offered after the
  queue's reservations are all made: the backfilling candidates.

Both keys are computed once per round (the order of a round does not change while it runs) and
end in the job id, so no tie is left to dict or set order. A queue delegated to another picker
(``job_pick_plugin``) is served by that picker, as in ``builtin_fcfs``.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job
from xce.core.pickers.easy_backfill import EasyBackfillPicker
from xce.core.specs import PEND


class OrderedEasyPicker(EasyBackfillPicker):
    name = "ordered_easy"

    def head_key(self, job: Job, now: int) -> Any:
        return (-job.priority, job.queue_time, job.jobid)

    #: Set to a method ``(job, now) -> key`` to reorder the backfilling candidates.
    backfill_key: Any = None

    def _walk(self):
        now = self.view.session.ts
        jobs = self._jobs
        for entry in list(self._order):
            queue = entry.queue
            if entry.delegate is not None:
                yield from self._delegated(entry)
                continue
            pending = [jobs[j] for j in entry.members]
            pending.sort(key=lambda j: self.head_key(j, now))
            allowed = queue.spec.reservations
            for pos, job in enumerate(pending):
                if self.backfill_key is not None and self._reserved.get(queue.name, 0) >= allowed:
                    rest = pending[pos:]
                    rest.sort(key=lambda j: self.backfill_key(j, now))
                    yield from self._offer(queue, rest)
                    break
                if not queue.is_ready():
                    break
                if job.state == PEND and queue.user_ready(job.user):
                    yield job

    @staticmethod
    def _offer(queue: Any, jobs: list[Job]):
        for job in jobs:
            if not queue.is_ready():
                return
            if job.state == PEND and queue.user_ready(job.user):
                yield job
