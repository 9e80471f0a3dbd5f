"""``easy_aged_sjf``: shortest first with EASY backfilling, and an aging bound that hands the
reservation back to first come, first served before anyone starves.

Why: most of EASY's bounded slowdown is short jobs waiting behind long ones that arrived first,
so offering the shortest jobs first cuts it a lot; but a pure shortest-first order starves the
long and wide jobs, which sites will not accept. The aging bound removes that: a job that has
waited longer than the bound goes ahead of every job that has not, in arrival order, so the
oldest such job is the first that blocks, gets EASY's reservation, and no stream of shorter jobs
can keep it from starting at that reservation.

How long is too long depends on the cluster's load and on the job. On load: an hour is an outrage
on a quiet machine and nothing on a saturated one, so the bound follows the waits the queue has
seen: AGE_FACTOR times the mean wait of the last WINDOW jobs this picker started -- a job that has
waited several times what jobs typically wait now has been passed over long enough. On a quiet
cluster (jobs start at once, mean wait 0) every waiting job is past the bound and the picker is
EASY itself. The bound never exceeds AGE_CAP_S: protected jobs start after long waits, which raise
the mean, which would raise the bound and protect the next ones later still; the cap stops that
feedback. On the job: a job as wide as the machine can start only once everything running has
ended, and every job that overtakes it pushes it back by that job's whole run, while a one-slot job
finds a hole as soon as any job ends. So the bound shrinks with the job's width: times
(1 - its slots / the cluster's slots), down to nothing for a job that needs the whole machine
(first come, first served for it, as under EASY).

The rule (per queue, every round, ``now`` the round's time; W the waits (start - queue time) of
the last WINDOW jobs started, oldest dropped first; T the cluster's slots; for a job, w = now -
queue time its wait and n its slots, the largest task count of its request):

- A job is aged when w * T >= AGE_CAP_S * (T - n), or W is not empty and
  w * len(W) * T >= AGE_FACTOR * sum(W) * (T - n): its wait reached
  min(AGE_CAP_S, AGE_FACTOR * mean(W)) * (1 - n / T).
- Order: by priority descending; within a priority, the aged jobs first, by queue time, job id;
  then the others by estimate (run limit, else the queue's ``max_run_limit``, else forever),
  queue time, job id.
- In that order jobs start while they fit; the first that does not fit gets ``easy_backfill``'s
  reservation (start S, extra X, counted as ``easy_backfill`` counts them); every later job, in the
  same order, starts now only if it ends by S or takes no more than X slots (X shrinks by what
  runs past S).

The three constants are the only tuned parameters, the same on every trace (docs/benchmarks.md).
The window of waits is the picker's state: it goes through ``save_state``/``load_state``.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job
from xce.core.pickers.ordered_easy import OrderedEasyPicker

NS = 1_000_000_000
#: A job is aged once it has waited this many times the recent mean wait...
AGE_FACTOR = 6
#: ...or this long (s), whichever comes first.
AGE_CAP_S = 24 * 3600
#: How many of the last started jobs' waits make the recent mean.
WINDOW = 100


class AgedSjfPicker(OrderedEasyPicker):
    name = "easy_aged_sjf"

    def __init__(self) -> None:
        super().__init__()
        #: Waits (ns) of the last WINDOW jobs started, oldest first.
        self.waits: list[int] = []
        self._sum = self._n = self._total = 0

    def aged(self, job: Job, now: int) -> bool:
        waited, total = now - job.queue_time, self._total
        narrow = max(0, total - self.sizes(job)[1])
        if waited * total >= AGE_CAP_S * NS * narrow:
            return True
        return self._n > 0 and waited * self._n * total >= AGE_FACTOR * self._sum * narrow

    def head_key(self, job: Job, now: int) -> Any:
        if self.aged(job, now):
            return (-job.priority, 0, job.queue_time, job.jobid)
        return (-job.priority, 1, self.sizes(job)[0], job.queue_time, job.jobid)

    def begin_session(self) -> None:
        super().begin_session()
        # Fixed for the round (the order does not move while it runs).
        self._sum, self._n = sum(self.waits), len(self.waits)
        self._total = int(self.view.cluster.total("slots").sum())

    def on_dispatch(self, jobid: int) -> None:
        job = self._jobs.get(jobid)
        if job is not None and self.view.session is not None:
            self.waits.append(max(0, self.view.session.ts - job.queue_time))
            del self.waits[:-WINDOW]
        super().on_dispatch(jobid)

    def save_state(self) -> dict[str, Any]:
        out = super().save_state()
        out["waits"] = list(self.waits)
        return out

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.waits = [int(w) for w in state.get("waits", [])][-WINDOW:]
