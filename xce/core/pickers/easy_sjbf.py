"""``easy_sjbf``: EASY backfilling that tries the shortest backfilling candidates first.

Why: ``easy_backfill`` offers the jobs behind the reserved one in arrival order, so a long job that
arrived early may take the hole a reservation leaves before many short jobs that would have fitted
it too. Short jobs are where waiting costs the most slowdown, and trying them first is the
"shortest job backfilled first" (SJBF) order of Tsafrir, Etsion and Feitelson (2007).

The rule: a queue's jobs are offered in ``builtin_fcfs`` order (priority descending, queue time,
job id) and start while they fit; the first that does not fit gets the reservation exactly as in
``easy_backfill`` (its start S, the extra X, the same queue settings). Once the queue's
reservations are made, the jobs left are offered in order of priority descending, then estimate
(run limit, else the queue's ``max_run_limit``, else forever), then queue time, then job id; each
starts now only under ``easy_backfill``'s rule (it ends by S, or takes no more than X slots, and X
shrinks by what a job running past S takes). The reserved job's start is as safe as under
``easy_backfill``; only which candidates take the holes changes.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job
from xce.core.pickers.ordered_easy import OrderedEasyPicker


class EasySjbfPicker(OrderedEasyPicker):
    name = "easy_sjbf"

    def backfill_key(self, job: Job, now: int) -> Any:
        return (-job.priority, self.sizes(job)[0], job.queue_time, job.jobid)
