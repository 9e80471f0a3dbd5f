"""Preemption and resumption around a victim policy (Req 6; the resume rule is XCE's own).

The policy only chooses; this module gives it a narrow view of the core and decides when a
suspended victim may come back: once every slot it released can be given back on its own hosts
(its processes are resident there) and no pending job that outranks it and may preempt its queue
is waiting.

Exclusive jobs need no rule of their own here: they hold every slot of their hosts (see
``xce.core.alloc.allocator``). So an exclusive preemptor fits only where every job holding a
slot on its hosts is a victim (it suspends everything there, or does not preempt there), a
victim that is exclusive gives back its whole hosts, and a suspended job comes back only when the
slots it held are free, never next to an exclusive job (nor, when exclusive, next to anything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xce.core.alloc.allocator import Allocator
from xce.core.model import Job
from xce.core.preempt import registry as policies
from xce.core.specs import PEND, RUN, SSUSP

if TYPE_CHECKING:
    from xce.core.core import SchedulerCore


class PreemptionView:
    """What a preempt policy may ask of the core, without reaching into its internals."""

    __slots__ = ("core", "allocator")

    def __init__(self, core: "SchedulerCore", allocator: Allocator) -> None:
        self.core = core
        self.allocator = allocator

    def rank(self, job: Job) -> tuple[int, int]:
        return self.core.rank(job)

    def preemptible_queues(self, job: Job) -> tuple[str, ...]:
        return self.core.queues[job.queue].spec.preemptible_queues

    def queue_preemptible(self, job: Job) -> bool:
        return self.core.queues[job.queue].spec.preemptible

    def running_jobs(self, queue_names: tuple[str, ...]) -> list[Job]:
        names = set(queue_names)
        return [j for j in self.core.running.values()
                if j.queue in names and j.state == RUN and j.preempted_by is None and not j.resume_sent]

    def fits_without(self, job: Job, victims: list[Job]) -> bool:
        """Would ``job`` be allocatable if the victims' slots were free? (Real resources stay charged.)"""
        cluster = self.core.cluster
        released = [(cluster.index[h], t) for v in victims for h, t in v.held() if h in cluster.index]
        for i, t in released:
            cluster.charge(i, "slots", -t)
        try:
            alloc, _ = self.allocator.place(job)
            if alloc is not None:
                self.allocator.rollback(alloc)
            return alloc is not None
        finally:
            for i, t in released:
                cluster.charge(i, "slots", t)


def choose_victims(core: "SchedulerCore", job: Job, allocator: Allocator) -> tuple[int, ...] | None:
    queue = core.queues[job.queue]
    if not queue.spec.preemptible_queues:
        return None
    victims = policies.create(queue.spec.preempt_policy).select_victims(PreemptionView(core, allocator), job)
    return tuple(victims) if victims else None


def resumable(core: "SchedulerCore") -> list[Job]:
    """Victims to resume now, best ranked first; their slots are counted as taken as they are chosen."""
    cluster = core.cluster
    free = cluster.available("slots").copy()
    chosen = []
    for job in sorted(core.preempted.values(), key=lambda j: (tuple(-x for x in core.rank(j)), j.jobid)):
        if job.resume_sent or job.state != SSUSP:
            continue
        idx = [(cluster.index.get(h), t) for h, t in job.held()]
        if any(i is None or not cluster.ok[i] or free[i] < t for i, t in idx):
            continue
        if threatened(core, job):
            continue
        for i, t in idx:
            free[i] -= t
        chosen.append(job)
    return chosen


def threatened(core: "SchedulerCore", victim: Job) -> bool:
    """Is a pending job waiting that outranks ``victim`` and may preempt its queue? Outranks as
    that queue's policy ranks (a policy without ``rank`` ranks as ``core.rank``)."""
    view = None
    for queue in core.queues.values():
        if victim.queue not in queue.spec.preemptible_queues or not queue.pending:
            continue
        rank = getattr(policies.create(queue.spec.preempt_policy), "rank", None)
        if rank is None:
            mine = core.rank(victim)
            if queue.priority > mine[0]:
                return True
            if queue.priority < mine[0]:
                continue
            rank = lambda _view, job: core.rank(job)  # noqa: E731
        view = view or PreemptionView(core, None)  # type: ignore[arg-type]
        mine = rank(view, victim)
        if any(j.queue == queue.name and j.state == PEND and rank(view, j) > mine for j in core.jobs.values()):
            return True
    return False
