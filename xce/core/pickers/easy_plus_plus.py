"""``easy_pp``: EASY++ (Tsafrir, Etsion and Feitelson, "Backfilling using system-generated
predictions rather than user runtime estimates", IEEE TPDS 18(6), 2007).

Why: users' requested times are mostly far above what their jobs use, so EASY plans reservations
later than needed and turns away backfilling candidates that would have ended in time. A user's
recent jobs predict the next one much better. EASY++ plans with those predictions and backfills
the shortest predicted jobs first; a job is still ended at its requested time (its run limit), so
a wrong prediction costs only a later start for the reserved job, never a job cut short.

The rule:

- A job's prediction is the average of the actual run times of its user's last two finished
  jobs (run while this picker scheduled them), at least 1 s and at most the job's estimate (run
  limit, else its queue's ``max_run_limit``, else forever). A user with fewer than two such jobs
  gets the estimate. A pending job's prediction follows its user's history until it starts; it is
  then fixed.
- A running job whose prediction has passed (start + prediction <= now) is predicted to run to its
  estimate: the simplest correction for a job that outlives its prediction.
- Everything ``easy_backfill`` does with estimates uses these predictions: the reservation's start
  S and extra X (running jobs walked by predicted end) and whether a candidate ends by S.
- Order: ``easy_sjbf``'s, with predictions: the queue in ``builtin_fcfs`` order up to the
  reservations, then the candidates by priority descending, prediction, queue time, job id.

State: the per-user history (last two run times) and the running jobs' fixed predictions; both go
through ``save_state``/``load_state`` so a snapshot or a replay predicts exactly as the live run.
The run time of a finished job is read from the core's logical clock (the ts of the event that
ended it), never from the wall clock.

As one queue's picker under ``builtin_fcfs`` (``job_pick_plugin`` of a queue) it is told when its
jobs start but not when they finish (``builtin_fcfs`` forwards only its pending jobs' changes), so
it has no history and plans with the requested times; use it as the cluster's picker.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job
from xce.core.pickers.ordered_easy import OrderedEasyPicker
from xce.core.specs import FINISHED, PEND

#: How many of a user's last finished jobs the prediction averages.
HISTORY = 2
#: The smallest prediction (ns): a job predicted to take no time would look overdue at its start.
MIN_PREDICTION = 1_000_000_000


class EasyPlusPlusPicker(OrderedEasyPicker):
    name = "easy_pp"

    def __init__(self) -> None:
        super().__init__()
        #: user -> the run times (ns) of their last HISTORY finished jobs, oldest first.
        self.history: dict[str, list[int]] = {}
        #: jobid -> the prediction (ns) fixed when the job started.
        self.predicted: dict[int, int] = {}

    def requested(self, job: Job) -> int:
        return super().estimate(job)

    def predict(self, job: Job) -> int:
        """The prediction for ``job`` from its user's history as it is now (ns)."""
        cap = self.requested(job)
        runs = self.history.get(job.user)
        if runs is None or len(runs) < HISTORY:
            return cap
        return min(cap, max(MIN_PREDICTION, sum(runs) // len(runs)))

    def estimate(self, job: Job) -> int:
        fixed = self.predicted.get(job.jobid)
        if fixed is None:
            return self.predict(job)
        session = self.view.session
        now = session.ts if session is not None else self.view.event_ts()
        if job.start_time + fixed > now:
            return fixed
        return self.requested(job)  # it outlived its prediction

    def backfill_key(self, job: Job, now: int) -> Any:
        return (-job.priority, self.sizes(job)[0], job.queue_time, job.jobid)

    def begin_session(self) -> None:
        super().begin_session()
        if len(self.predicted) > len(self.view.running):  # some may have finished unseen (delegated)
            jobs = self.view.jobs
            self.predicted = {j: p for j, p in self.predicted.items() if j in jobs}

    # -- history ---------------------------------------------------------------------------
    def on_dispatch(self, jobid: int) -> None:
        job = self._jobs.get(jobid)
        if job is not None:
            self.predicted[jobid] = self.predict(job)
        super().on_dispatch(jobid)

    def on_job_state_change(self, job: Job, new_state: str) -> None:
        super().on_job_state_change(job, new_state)
        if new_state in FINISHED:
            if self.predicted.pop(job.jobid, None) is not None:
                ran = self.view.event_ts() - job.start_time
                runs = self.history.setdefault(job.user, [])
                runs.append(max(0, ran))
                del runs[:-HISTORY]
                self._sizes.clear()  # the user's pending jobs are predicted afresh
        elif new_state == PEND:
            self.predicted.pop(job.jobid, None)  # requeued: predicted afresh when it starts again

    # -- snapshot ----------------------------------------------------------------------------
    def save_state(self) -> dict[str, Any]:
        out = super().save_state()
        out["history"] = {user: list(runs) for user, runs in sorted(self.history.items())}
        out["predicted"] = [[jobid, p] for jobid, p in sorted(self.predicted.items())]
        return out

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.history = {str(u): [int(r) for r in runs] for u, runs in state.get("history", {}).items()}
        self.predicted = {int(j): int(p) for j, p in state.get("predicted", [])}
