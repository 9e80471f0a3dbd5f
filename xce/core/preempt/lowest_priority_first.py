"""``lowest_priority_first``: the default victim selection (Req 6 AC 3, 9).

A job's preemption rank is ``(queue priority, job priority)``: a job in a higher-priority queue
outranks any job of a lower-priority queue, and job priority decides within the same queue
priority. Victims are running jobs of the preempting queue's ``preemptible_queues`` whose queue is
``preemptible`` and whose rank is strictly lower. They are taken in order (lowest rank first, then
most recently started first, so the least work is lost, then job id) until the job fits; then
every victim that is not needed is dropped, so the set is minimal.
"""

from __future__ import annotations

from typing import Any, Sequence


class LowestPriorityFirst:
    name = "lowest_priority_first"

    def select_victims(self, ctx: Any, job: Any) -> tuple[int, ...] | None:
        """Return a minimal victim set that makes ``job`` allocatable, or None."""
        mine = ctx.rank(job)
        candidates = [v for v in ctx.running_jobs(ctx.preemptible_queues(job))
                      if ctx.queue_preemptible(v) and ctx.rank(v) < mine]
        candidates.sort(key=lambda v: (ctx.rank(v), -v.start_time, v.jobid))
        chosen: list[Any] = []
        for victim in candidates:
            chosen.append(victim)
            if ctx.fits_without(job, chosen):
                return tuple(v.jobid for v in _minimise(ctx, job, chosen))
        return None


def _minimise(ctx: Any, job: Any, chosen: Sequence[Any]) -> list[Any]:
    """Drop victims not needed, trying the most valuable (last taken) first."""
    kept = list(chosen)
    for victim in reversed(chosen):
        trial = [v for v in kept if v is not victim]
        if trial and ctx.fits_without(job, trial):
            kept = trial
    return kept
