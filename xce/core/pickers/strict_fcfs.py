"""``strict_fcfs``: the head of each queue blocks those behind it (Slurm's ``sched/builtin``).

Jobs are offered in ``builtin_fcfs`` order; once a job of a queue cannot start, no later job of
that queue is tried this round, so a wide job is never overtaken by the narrow ones behind it.
A job whose request does not parse can never start and blocks nothing.
"""

from __future__ import annotations

from xce.core.pickers.fcfs import FcfsPicker


class StrictFcfsPicker(FcfsPicker):
    name = "strict_fcfs"

    def begin_session(self) -> None:
        super().begin_session()
        self._halt = False

    def on_pend(self, jobid: int) -> None:
        super().on_pend(jobid)
        job = self._jobs.get(jobid)
        if job is not None and job.request is not None:
            self._halt = True
