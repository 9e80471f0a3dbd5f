"""``queue_priority_first``: victims ranked by ``(queue priority, job priority)``, as LSF ranks them.

A job of a higher-priority queue outranks every job of a lower-priority one, and job priority
decides only between queues of the same priority: a priority-1 job in ``high`` may suspend a
priority-100 job in ``low``. That goes beyond Req 6 AC 9, which compares job priorities alone
(``lowest_priority_first``, the default), so a queue has to name this policy to get it. Candidates,
order and the smallest set are otherwise those of ``lowest_priority_first``.
"""

from __future__ import annotations

from typing import Any

from xce.core.preempt.lowest_priority_first import LowestPriorityFirst


class QueuePriorityFirst(LowestPriorityFirst):
    name = "queue_priority_first"

    @staticmethod
    def rank(ctx: Any, job: Any) -> tuple[int, ...]:
        return ctx.rank(job)
