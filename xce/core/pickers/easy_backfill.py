"""``easy_backfill``: first come, first served, with reservations and backfilling (Slurm's
``sched/backfill``, LSF's slot reservation with backfill, Maui's EASY).

Jobs are offered in ``builtin_fcfs`` order and start while they fit. The first job that does not
fit gets a reservation: the running jobs are walked by estimated end (start + run limit; a job with
no limit counts as running for its queue's ``max_run_limit``, or forever), then job id, adding
their slots to the free count until the blocked job's request could be met. That end is the
reservation's start S (the shadow time), and what is free then beyond the request is the extra X.
A later job J may start now only if it cannot delay the reservation: it ends by S (now + its
estimate <= S), or it takes no more than X slots, and when it runs past S, X shrinks by what it
took. A job refused that way is told it would delay the reservation's job.

Reservations are host-aware. When the blocked job's request has structure (``span[...]``,
``select[...]``, ``order[...]``, a compound or alternatives) the reservation is the placement the
allocator itself finds on the hosts as they will be at S; a job running past S may then use only
what that placement leaves over on those hosts, which the core holds back while it places the job
(``SchedulerCore._schedule_constrained``). A plain request can use any free slot, so for it the
count is exact.

The spare count (``spare``, a picker option): by default X counts the slots free now plus those of
the running jobs walked up to the one whose end makes the blocked job fit, in that order, so a job
estimated to end at the same time S but walked later is left out. ``easy_backfill_shadow`` sets
``spare = "shadow"``: X counts everything free at S (every running job estimated to end by S), as
EASY is usually described (Mu'alem and Feitelson 2001). It is equally safe for the reserved job,
whose request is met at S either way, and lets more jobs that run past S start now. The default
stays as it was so that existing schedules and their decision digests do not change.

Queue settings: ``reservations`` (how many blocked jobs get one per round: 1 = EASY; more
approaches conservative backfilling, each later reservation planned as if the earlier ones held
their slots from now) and ``backfill_depth`` (how many of the queue's pending jobs a round tries).

Exclusive jobs hold every slot of their hosts (``xce.core.alloc.allocator``), so the walk above
counts those slots as coming back when one ends. An exclusive job that blocks is always planned
host-aware (on hosts empty at S). An exclusive job that would run past S takes whole hosts it has
not chosen yet: it counts as taking its tasks times the most slots a host has (at most every
slot), and the held-back hosts of a host-aware reservation are not empty, so it avoids them.

The reservations are planned afresh in every round from the core's running jobs (read once per
reservation, never per ``next_job``), so the picker carries no plan between rounds. What it keeps
is cost, not state: a pending job's estimate and size (asked on every attempt; dropped by the hooks
that report a change to the job or its queue) and a running job's slot count (kept while what it
holds is the same tuple). Which hosts a plain reservation frees up on is worked out only when
``pend_note`` shows them: a blocked job is mostly pended without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xce.core.model import Job
from xce.core.pickers.fcfs import FcfsPicker

NS = 1_000_000_000
#: A job with no run limit and no queue maximum runs "forever" (ns).
FOREVER = 1 << 62


@dataclass(slots=True)
class Reservation:
    jobid: int
    #: When the job is expected to start (ns), and the extra slots free then beyond its request.
    start: int
    extra: int
    #: Host-aware reservations: host index -> slots that may still be taken by jobs running past
    #: ``start`` (what the reserved placement leaves over there); empty for a plain request.
    leftover: dict[int, int] = field(default_factory=dict)
    #: Host index -> slots of the reserved placement (for ``xce jobs -l`` and the tests).
    placement: dict[int, int] = field(default_factory=dict)
    #: The running job whose end makes room, and (plain requests) where the slots free up: the
    #: indexes of the hosts free when it was planned and the running jobs walked. The hosts are
    #: named from them only when shown (``pend_note``): most rounds the blocked job is not.
    after: int = 0
    freed: tuple[Any, tuple[Job, ...]] | None = None
    #: What a job that would delay it is told (``constraint``), worded once per reservation.
    refusal: str = field(init=False)

    def __post_init__(self) -> None:
        self.refusal = f"would delay job {self.jobid}, which holds a reservation"


def plain(request: Any) -> bool:
    """A request any free slots can serve (one primary, no select, order or span)."""
    if len(request.alternatives) != 1 or len(request.alternatives[0].primaries) != 1:
        return False
    p = request.alternatives[0].primaries[0]
    return p.select is None and not p.order and p.span_hosts is None and p.span_ptile is None


def most_slots(job: Job) -> int:
    return max(c.total_tasks for c in job.request.alternatives) if job.request is not None else job.tasks


def most_held(job: Job, cluster: Any) -> int:
    """The most slots ``job`` may hold once placed: its tasks, or for an exclusive job (charged
    whole hosts not chosen yet) its tasks times the largest host, at most every slot there is."""
    size = most_slots(job)
    if not job.exclusive:
        return size
    total = cluster.total("slots")
    return min(size * int(total.max()), int(total.sum())) if len(total) else size


class EasyBackfillPicker(FcfsPicker):
    name = "easy_backfill"
    #: How the extra X is counted: "fit" (the default) stops at the running job whose end makes the
    #: blocked job fit; "shadow" also counts the jobs estimated to end at that same time S.
    spare = "fit"

    def __init__(self) -> None:
        super().__init__()
        self.reservations: list[Reservation] = []
        self._offered: Job | None = None
        self._refused: int | None = None
        self._tried: dict[str, int] = {}
        #: This round: whether a reservation holds slots on particular hosts (``constraint`` then
        #: answers with holds).
        self._host_aware = False
        #: A subclass that overrides ``on_pend`` hears every job (``_told_already``).
        self._listens = type(self).on_pend is not EasyBackfillPicker.on_pend
        self._reserved: dict[str, int] = {}
        #: Pending jobid -> (estimate, most_slots): asked on every attempt, and fixed while the job
        #: pends but for what the hooks report (its update, its queue's, its end), which drop it.
        self._sizes: dict[int, tuple[int, int]] = {}
        #: Running jobid -> (its ``held()``, the slots in it): a reservation walks the running jobs
        #: by end every round, and what a job holds is fixed while it runs (checked by identity).
        self._holds: dict[int, tuple[Any, int]] = {}

    # -- estimates -----------------------------------------------------------------------
    def estimate(self, job: Job) -> int:
        """How long ``job`` may run, in ns: its run limit, else its queue's maximum, else forever."""
        if job.run_limit > 0:
            return job.run_limit * NS
        queue = self.view.queues.get(job.queue)
        most = queue.spec.max_run_limit if queue is not None else None
        return most * NS if most else FOREVER

    def sizes(self, job: Job) -> tuple[int, int]:
        """``(estimate(job), most_slots(job))`` of a pending job, kept until a hook drops them."""
        got = self._sizes.get(job.jobid)
        if got is None:
            got = self._sizes[job.jobid] = (self.estimate(job), most_slots(job))
        return got

    def on_queue_update(self, queue: Any) -> None:
        super().on_queue_update(queue)
        self._sizes.clear()  # its max_run_limit may have changed

    def on_job_push(self, job: Job) -> None:
        self._sizes.pop(job.jobid, None)
        super().on_job_push(job)

    def on_job_update(self, job: Job) -> None:
        self._sizes.pop(job.jobid, None)
        super().on_job_update(job)

    def on_job_state_change(self, job: Job, new_state: str) -> None:
        self._sizes.pop(job.jobid, None)
        super().on_job_state_change(job, new_state)

    # -- session -------------------------------------------------------------------------
    def begin_session(self) -> None:
        super().begin_session()
        self.reservations = []
        self._offered = None
        self._refused = None
        self._tried = {}
        self._reserved = {}
        self._host_aware = False

    def next_job(self) -> Job | None:
        while True:
            job = next(self._cursor, None)
            if job is None:
                self._offered = None
                return None
            entry = self._queues.get(job.queue)
            depth = entry.queue.spec.backfill_depth if entry is not None else None
            tried = self._tried.get(job.queue, 0)
            if depth is not None and tried >= depth:
                continue
            self._tried[job.queue] = tried + 1
            if self.reservations and job.last_pend is not None and self._told_already(job, entry):
                continue
            self._offered = job
            return job

    def _told_already(self, job: Job, entry: Any) -> bool:
        """Whether offering ``job`` would tell it nothing new, so that it may be left out: it is
        refused again for a reservation as it was told, or, once its queue has all its reservations
        and none holds slots on particular hosts, the core knows it fails as before (``on_pend``
        would reserve nothing for it). A subclass that overrides ``on_pend`` is offered every job,
        as ``builtin_fcfs`` does."""
        if self._listens:
            return False
        refusal = self._refusal(job)
        if refusal is not None:
            return self.view.refused_before(job, refusal)
        allowed = entry.queue.spec.reservations if entry is not None else 1
        return (self._reserved.get(job.queue, 0) >= allowed and not self._host_aware
                and self.view.fails_as_before(job))

    def _refusal(self, job: Job) -> str | None:
        """What ``job`` is told when starting it now would delay a reservation, else None."""
        estimate, size = self._sizes.get(job.jobid) or self.sizes(job)
        end = self.view.session.ts + estimate
        if job.exclusive:
            size = most_held(job, self.view.cluster)
        for r in self.reservations:
            if size > r.extra and end > r.start:
                return r.refusal
        return None

    def constraint(self, job: Job) -> Any:
        """None (start it wherever it fits), a refusal, or slots to hold back while it is placed."""
        if not self.reservations:
            return None
        refusal = self._refusal(job)
        if refusal is not None:
            self._refused = job.jobid
            return refusal
        end = self.view.session.ts + (self._sizes.get(job.jobid) or self.sizes(job))[0]
        holds: dict[int, int] | None = None
        for r in self.reservations:
            if end <= r.start:
                continue
            if r.leftover:
                free = self.view.cluster.free_slots_ok()
                holds = {} if holds is None else holds
                for i, left in r.leftover.items():
                    hold = int(free[i]) - max(0, left)
                    if hold > holds.get(i, 0):
                        holds[i] = hold
        return holds or None

    def on_dispatch(self, jobid: int) -> None:
        job = self._offered if self._offered is not None and self._offered.jobid == jobid else None
        super().on_dispatch(jobid)
        kept = self._sizes.pop(jobid, None)
        if job is None or not self.reservations:
            return
        end = job.start_time + (kept[0] if kept is not None else self.estimate(job))
        taken = self._slots(job)
        index = self.view.cluster.index
        for r in self.reservations:
            if end > r.start:
                r.extra -= taken
                if r.leftover:
                    for host, n in job.held():
                        i = index.get(host)
                        if i in r.leftover:
                            r.leftover[i] -= n

    def on_pend(self, jobid: int) -> None:
        super().on_pend(jobid)
        job = self._offered
        if job is None or job.jobid != jobid:
            return
        if self._refused == jobid:
            self._refused = None
            return
        if job.request is None:
            return
        entry = self._queues.get(job.queue)
        allowed = entry.queue.spec.reservations if entry is not None else 1
        made = self._reserved.get(job.queue, 0)
        if made >= allowed:
            return
        r = self._reserve(job)
        if r is not None:
            self.reservations.append(r)
            self._reserved[job.queue] = made + 1
            self._host_aware = self._host_aware or bool(r.leftover)

    def pend_note(self, job: Job) -> Any:
        """What ``xce jobs -l`` shows of a reservation: when and where the job expects to start."""
        for r in self.reservations:
            if r.jobid == job.jobid:
                from xce.core.reasons import make_pend_reason

                hosts = self.view.cluster.hosts
                names = [hosts[i].name for i in self._hosts(r)]
                where = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                wait = max(0, r.start - self.view.session.ts) // NS
                return make_pend_reason("reservation", detail=(
                    f"holds a reservation: expected to start in {wait // 3600}:{wait // 60 % 60:02d}:{wait % 60:02d} "
                    f"(when job {r.after} ends, by its run limit) on host(s) {where}"))
        return None

    # -- planning a reservation ----------------------------------------------------------
    def _reserve(self, job: Job) -> Reservation | None:
        core = self.view
        cluster = core.cluster
        now = core.session.ts
        free_now = cluster.free_slots_ok()
        free = int(free_now.sum())
        running = core.running
        ends: list[tuple[int, int, Job]] = []
        for r in running.values():
            ends.append((r.start_time + self.estimate(r), r.jobid, r))
        # Earlier reservations are planned as holding their slots from now until they end.
        for held in self.reservations:
            free -= self._reserved_size(held)
        size = self.sizes(job)[1]
        ends.sort(key=lambda e: (e[0], e[1]))
        structured = job.exclusive or not plain(job.request)
        holds = self._holds
        if len(holds) > 2 * len(running) + 64:
            self._holds = holds = {j: h for j, h in holds.items() if j in running}
        index = cluster.index
        # Slot counts alone decide S and X; the hosts they free up on are read only where they
        # matter (a structured request's placement, the hosts a plain one is shown).
        released: dict[int, int] = {}
        counted = 0  # ends[:counted] are counted in free
        placed_upto = 0  # ends[:placed_upto] are counted in released
        for k, (end, _, r) in enumerate(ends):
            if end >= FOREVER:
                break
            if k >= counted:
                free += self._slots(r)
                counted = k + 1
            if free < size:
                continue
            if self.spare == "shadow":  # the textbook X: all that is free at S, ties at S included
                while counted < len(ends) and ends[counted][0] == end:
                    free += self._slots(ends[counted][2])
                    counted += 1
            if not structured:
                walked = tuple(e[2] for e in ends[:counted])
                return Reservation(job.jobid, max(end, now), free - size, after=r.jobid,
                                   freed=(free_now.nonzero()[0], walked))
            for _, _, gone in ends[placed_upto:counted]:
                for host, n in gone.held():  # an exclusive job gives back every slot of its hosts
                    i = index.get(host)
                    if i is not None:
                        released[i] = released.get(i, 0) + n
            placed_upto = counted
            placed = self.view.placement_if_freed(job, released)
            if placed is not None:
                start = max(end, now)
                leftover = {i: int(free_now[i]) + released.get(i, 0) - n for i, n in placed.items()}
                return Reservation(job.jobid, start, free - size, leftover, placed, after=r.jobid)
        return None

    def _slots(self, r: Job) -> int:
        """The slots running job ``r`` gives back when it ends (an exclusive job every slot of its hosts)."""
        gone = r.held()
        got = self._holds.get(r.jobid)
        if got is None or got[0] is not gone:
            got = self._holds[r.jobid] = (gone, sum(n for _, n in gone))
        return got[1]

    def _hosts(self, r: Reservation) -> list[int]:
        """The indexes of the hosts ``r`` expects to start its job on: its placement, or for a plain
        request every host free when it was planned or held by a running job walked."""
        if r.freed is None:
            return sorted(r.placement)
        free, walked = r.freed
        index = self.view.cluster.index
        hosts = set(free.tolist())
        for job in walked:
            hosts.update(index[host] for host, _ in job.held() if host in index)
        return sorted(hosts)

    def _reserved_size(self, r: Reservation) -> int:
        job = self._jobs.get(r.jobid)
        if job is not None and job.exclusive and r.placement:
            return sum(r.placement.values())  # the whole hosts it is planned on
        return self.sizes(job)[1] if job is not None else 0


class EasyShadowPicker(EasyBackfillPicker):
    """``easy_backfill_shadow``: ``easy_backfill`` with ``spare = "shadow"`` (see the module docstring)."""

    name = "easy_backfill_shadow"
    spare = "shadow"
