"""``lowest_priority_first``: the default victim selection, Req 6 AC 3 and AC 9 as written.

Only job priority counts: a victim's priority is strictly below the preemptor's, whatever the
queues' priorities, so a priority-1 job in ``high`` never suspends a priority-100 job in ``low``
(``queue_priority_first`` ranks by queue first, for sites that want LSF's queue-based preemption).
Victims are running jobs of the preempting queue's ``preemptible_queues`` whose queue is
``preemptible``, ranked lowest priority first, then most recently started first (the least work
is lost), then job id; the set chosen is the smallest one that makes room (``minimum``).
"""

from __future__ import annotations

from typing import Any

from xce.core.preempt.minimum import minimum_set


class LowestPriorityFirst:
    name = "lowest_priority_first"

    @staticmethod
    def rank(ctx: Any, job: Any) -> tuple[int, ...]:
        return (job.priority,)

    def select_victims(self, ctx: Any, job: Any) -> tuple[int, ...] | None:
        """Return the smallest victim set that makes ``job`` allocatable, or None."""
        mine = self.rank(ctx, job)
        candidates = [v for v in ctx.running_jobs(ctx.preemptible_queues(job))
                      if ctx.queue_preemptible(v) and self.rank(ctx, v) < mine]
        candidates.sort(key=lambda v: (self.rank(ctx, v), -v.start_time, v.jobid))
        victims = minimum_set(ctx, job, candidates)
        return tuple(v.jobid for v in victims) if victims else None
