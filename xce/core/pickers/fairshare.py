"""``fairshare``: jobs ordered by a fair-share factor per user or per project (LSF's dynamic user
priority, Slurm's classic fair-share factor), with ``easy_backfill``'s reservations and
backfilling on top (``reservations = 0`` on the queue turns those off).

Usage is slot-seconds, decayed with the queue's ``fairshare_half_life``: what ran a half-life ago
counts half. The factor of a user (or project) is ``2 ** (-U / S)``, where U is its share of the
decayed usage of everyone in the queue and S its share of the configured shares (``shares``; a
name not listed has 1), so those below their share come first and usage settles in proportion to
the shares of those with pending work. Within a queue, jobs go by factor, then job priority, then
submit time and job id; queues keep their priority order.

Usage is brought up to date once per round (the running jobs are read then, never per
``next_job``) and when a job ends; it is part of the picker's snapshot state.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job
from xce.core.pickers.easy_backfill import NS, EasyBackfillPicker
from xce.core.specs import PEND, RUN


class FairsharePicker(EasyBackfillPicker):
    name = "fairshare"

    def __init__(self) -> None:
        super().__init__()
        #: (queue, user or project) -> decayed slot-seconds, as of ``_at`` (ns).
        self.usage: dict[tuple[str, str], float] = {}
        self._at: int | None = None
        #: Running jobid -> (when its usage was last counted (ns), its slots, whose usage it is).
        self._counted: dict[int, tuple[int, int, tuple[str, str]]] = {}

    def _owner(self, job: Job) -> tuple[str, str]:
        queue = self.view.queues.get(job.queue)
        by = queue.spec.fairshare_by if queue is not None else "user"
        return (job.queue, job.project if by == "project" else job.user)

    def _half_life(self, qname: str) -> int:
        queue = self.view.queues.get(qname)
        return queue.spec.fairshare_half_life if queue is not None else 7 * 24 * 3600

    def _advance(self, now: int) -> None:
        """Decay every usage to ``now`` and count what the running jobs used since last time."""
        last = self._at
        if self._at is not None and now > self._at:
            dt = (now - self._at) / NS
            for key in list(self.usage):
                self.usage[key] *= 2.0 ** (-dt / self._half_life(key[0]))
        self._at = now if self._at is None else max(self._at, now)
        for job in self.view.running.values():
            if job.jobid not in self._counted:  # resumed, or running when the scheduler started
                self._track(job, since=job.start_time if last is None else max(job.start_time, last))
        for jobid in list(self._counted):
            self._count(jobid, now)

    def _track(self, job: Job, since: int | None = None) -> None:
        start = job.start_time if since is None else since
        # Slot-seconds of what it holds: an exclusive job is charged its hosts' every slot.
        self._counted[job.jobid] = (start, sum(n for _, n in job.held()), self._owner(job))

    def _count(self, jobid: int, now: int) -> None:
        since, slots, key = self._counted[jobid]
        if now > since:
            self.usage[key] = self.usage.get(key, 0.0) + slots * (now - since) / NS
            self._counted[jobid] = (now, slots, key)

    def on_dispatch(self, jobid: int) -> None:
        job = self._jobs.get(jobid)
        super().on_dispatch(jobid)
        if job is not None:
            self._track(job)

    def on_job_state_change(self, job: Job, new_state: str) -> None:
        if job.jobid in self._counted and new_state != RUN and self.view is not None:
            self._count(job.jobid, self.view.now())  # what it used since the last round
            del self._counted[job.jobid]  # ended, requeued or suspended: nothing more until it runs again
        super().on_job_state_change(job, new_state)

    def factor(self, queue: str, owner: str) -> float:
        """``2 ** (-U / S)`` of ``owner`` in ``queue`` (1.0 when nobody has used anything yet)."""
        spec = self.view.queues[queue].spec
        shares = dict(spec.shares)
        mine = [(q, o) for (q, o) in self.usage if q == queue]
        total_usage = sum(self.usage[k] for k in mine)
        owners = {o for _, o in mine} | {owner} | set(shares)
        total_shares = sum(shares.get(o, 1) for o in owners)
        if total_usage <= 0 or total_shares <= 0:
            return 1.0
        u = self.usage.get((queue, owner), 0.0) / total_usage
        s = shares.get(owner, 1) / total_shares
        return 2.0 ** (-u / s) if s > 0 else 0.0

    def begin_session(self) -> None:
        super().begin_session()
        self._advance(self.view.session.ts if self.view.session is not None else self.view.now())
        self._cursor = self._fair_walk()

    def _fair_walk(self):
        for entry in list(self._order):
            queue = entry.queue
            if entry.delegate is not None:
                yield from self._delegated(entry)
                continue
            factors: dict[str, float] = {}
            ranked = []
            for jobid in entry.members:
                job = self._jobs[jobid]
                owner = self._owner(job)[1]
                f = factors.get(owner)
                if f is None:
                    f = factors[owner] = self.factor(queue.name, owner)
                ranked.append((-f, -job.priority, job.queue_time, jobid))
            ranked.sort()
            for *_, jobid in ranked:
                if not queue.is_ready():
                    break
                job = self._jobs.get(jobid)
                if job is not None and job.state == PEND and queue.user_ready(job.user):
                    yield job

    def save_state(self) -> dict[str, Any]:
        return {"usage": [[q, o, u] for (q, o), u in sorted(self.usage.items())], "at": self._at,
                "counted": [[j, t, n, q, o] for j, (t, n, (q, o)) in sorted(self._counted.items())]}

    def load_state(self, state: dict[str, Any]) -> None:
        self.usage = {(q, o): float(u) for q, o, u in state.get("usage", [])}
        self._at = state.get("at")
        self._counted = {int(j): (int(t), int(n), (q, o)) for j, t, n, q, o in state.get("counted", [])}
