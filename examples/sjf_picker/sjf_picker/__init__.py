"""Shortest job first: an example XCE job picker plugin.

Queues are taken by priority, highest first (ties by name), exactly as ``builtin_fcfs`` does.
Within a queue the job with the fewest tasks goes first, then the one queued earliest, then the
lowest job id. Job priority is ignored on purpose: that is the point of the example.

The picker keeps its own structures, fed only by the hooks (``next_job`` never scans the core),
and re-sorts once per session when something changed.
"""

from __future__ import annotations

from typing import Any

from xce.core.pickers import BasePicker

PEND = "PEND"


class ShortestJobFirst(BasePicker):
    name = "sjf"

    def __init__(self) -> None:
        super().__init__()
        self._queues: dict[str, Any] = {}  # queue name -> Queue
        self._pending: dict[int, Any] = {}  # job id -> Job, every PEND job we were told about
        self._order: list[Any] = []  # this session's candidates, best first
        self._dirty = True
        self._pos = 0

    def _key(self, job: Any) -> tuple:
        queue = self._queues.get(job.queue)
        prio = queue.priority if queue is not None else 0
        return (-prio, job.queue, job.tasks, job.queue_time, job.jobid)

    # -- state-change hooks: keep our own view up to date -------------------------------
    def on_queue_update(self, queue: Any) -> None:
        self._queues[queue.name] = queue
        self._dirty = True

    def on_job_push(self, job: Any) -> None:
        if job.state == PEND:
            self._pending[job.jobid] = job
            self._dirty = True

    def on_job_state_change(self, job: Any, new_state: str) -> None:
        if new_state == PEND:
            self.on_job_push(job)
        else:
            self._pending.pop(job.jobid, None)

    def on_job_update(self, job: Any) -> None:  # queue or priority changed: re-sort
        self._dirty = True

    # -- session: a cursor over a list sorted once ----------------------------------------
    def begin_session(self) -> None:
        if self._dirty:
            self._order = sorted(self._pending.values(), key=self._key)
            self._dirty = False
        self._pos = 0

    def next_job(self) -> Any:
        while self._pos < len(self._order):
            job = self._order[self._pos]
            self._pos += 1
            queue = self._queues.get(job.queue)
            if (job.jobid in self._pending and job.state == PEND and queue is not None
                    and queue.is_ready() and queue.user_ready(job.user)):
                return job
        return None

    def end_session(self) -> None:
        pass

    # -- after allocation -------------------------------------------------------------------
    def on_dispatch(self, jobid: int) -> None:
        self._pending.pop(jobid, None)  # stale entries in _order are skipped, then dropped
        self._dirty = True

    def on_pend(self, jobid: int) -> None:
        pass  # it stays where it is
