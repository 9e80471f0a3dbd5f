"""``builtin_fcfs`` (Req 8): queues by priority descending (ties by name), jobs within a queue by
priority descending, then queue time ascending, then job id ascending.

The picker keeps its own per-queue ordered lists, fed only by the hooks. Inserts append, and mark
the list dirty when the new key is not the largest; removals drop the job from ``members`` and
leave a stale entry behind, which walks skip. A dirty list (or one with more stale entries than
live ones) is compacted and sorted once at ``begin_session`` (Timsort on an almost-sorted list is
nearly linear), so a push of 100,000 jobs costs no quadratic insertion and ``next_job()`` is a
cursor walk; a clean one only loses its stale front, so a round that merely started the head or
saw jobs arrive in order costs nothing per queued job.

A queue whose ``job_pick_plugin`` names another picker delegates its jobs to an instance of that
picker (Req 5 AC 2): this picker still decides when the queue's turn comes.
"""

from __future__ import annotations

from typing import Any

from xce.core.model import Job, Queue
from xce.core.pickers.base import BasePicker, Constraint, PendNote
from xce.core.pickers.hooks import PickerHooks, methods
from xce.core.specs import PEND

Key = tuple[int, int, int]


def job_key(job: Job) -> Key:
    return (-job.priority, job.queue_time, job.jobid)


class _QueueEntry:
    __slots__ = ("queue", "keys", "members", "dirty", "delegate", "hooks")

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        self.keys: list[Key] = []
        self.members: dict[int, Key] = {}
        self.dirty = False
        self.delegate: Any = None
        #: The delegate's optional hooks (``PickerHooks``), None without a delegate.
        self.hooks: PickerHooks | None = None

    def add(self, job: Job) -> None:
        key = job_key(job)
        self.members[job.jobid] = key
        keys = self.keys
        if keys and not key > keys[-1]:
            # Out of order, or maybe the key of a job removed and pushed again: sorted at the next
            # ``tidy``. A job later than every listed one (the usual arrival) keeps the list sorted.
            self.dirty = True
        keys.append(key)

    def remove(self, jobid: int) -> None:
        self.members.pop(jobid, None)
        if len(self.keys) > 2 * len(self.members) + 64:
            self.dirty = True

    def tidy(self) -> None:
        members = self.members
        if not self.dirty:
            # Only removals or in-order arrivals: the list is sorted and unique. The jobs that left
            # from its front (the head started) go, so a walk stopped at the head reads no stale key.
            keys = self.keys
            n = 0
            while n < len(keys) and members.get(keys[n][2]) != keys[n]:
                n += 1
            if n:
                del keys[:n]
        else:
            # Filtered in place of order and sorted as a list: the keys are mostly in order already
            # (jobs arrive by queue time), which Timsort finds in linear time; a set would lose it.
            keys = [k for k in self.keys if members.get(k[2]) == k]
            keys.sort()
            if len(keys) != len(members):
                # A job removed and re-added with an unchanged key leaves a duplicate (every member
                # has at least one key): keep one. Sorted, duplicates are neighbours.
                keys = [k for n, k in enumerate(keys) if not n or keys[n - 1] != k]
            self.keys = keys
            self.dirty = False


class FcfsPicker(BasePicker):
    name = "builtin_fcfs"

    def __init__(self) -> None:
        super().__init__()
        self._queues: dict[str, _QueueEntry] = {}
        self._order: list[_QueueEntry] = []
        self._jobs: dict[int, Job] = {}
        self._where: dict[int, str] = {}
        self._cursor: Any = iter(())
        self._delegates = 0
        #: Set by a subclass (strict_fcfs) to end the current queue's walk after the job just offered.
        self._halt = False
        #: This session's halted queues: (entry, the job that halted it, its position in entry.keys).
        self._held: list[tuple[_QueueEntry, Job, int]] = []

    # -- state-change hooks --------------------------------------------------------------
    def on_queue_update(self, queue: Queue) -> None:
        entry = self._queues.get(queue.name)
        if entry is None:
            entry = self._queues[queue.name] = _QueueEntry(queue)
        entry.queue = queue
        wanted = queue.spec.job_pick_plugin
        current = entry.delegate.name if entry.delegate is not None else None
        if wanted in (None, self.name):
            wanted = None
        if wanted != current:
            self._switch_delegate(entry, wanted)
        if entry.delegate is not None:
            entry.delegate.on_queue_update(queue)
            entry.hooks = PickerHooks(entry.delegate)
        self._order = sorted(self._queues.values(), key=lambda e: (-e.queue.priority, e.queue.name))

    def _switch_delegate(self, entry: _QueueEntry, name: str | None) -> None:
        jobs = [self._jobs[j] for j in sorted(entry.members)] if entry.delegate is None else [
            self._jobs[j] for j, q in sorted(self._where.items()) if q == entry.queue.name]
        if entry.delegate is not None:
            entry.delegate.fini()
            self._delegates -= 1
        entry.delegate = entry.hooks = None
        entry.members.clear()
        entry.keys.clear()
        if name is not None:
            self._delegates += 1
            entry.delegate = self.view.create_picker(name)
            entry.delegate.init(self.view)
            entry.delegate.on_queue_update(entry.queue)
            entry.hooks = PickerHooks(entry.delegate)
        # A delegate's hooks for its own jobs: this picker has them while some delegate has them (the
        # core looks them up again after on_queue_update), so no round pays for a hook nobody has.
        for method in (*methods(Constraint), *methods(PendNote)):
            if any(getattr(e.hooks, method) is not None for e in self._queues.values() if e.hooks is not None):
                setattr(self, method, self._forward(method))
            else:
                self.__dict__.pop(method, None)
        for job in jobs:
            self._add(entry, job)

    def _entry(self, queue_name: str) -> _QueueEntry | None:
        return self._queues.get(queue_name)

    def _add(self, entry: _QueueEntry, job: Job) -> None:
        if entry.delegate is not None:
            entry.delegate.on_job_push(job)
        else:
            entry.add(job)

    def _drop(self, jobid: int, new_state: str = "EXIT") -> None:
        qname = self._where.pop(jobid, None)
        job = self._jobs.pop(jobid, None)
        entry = self._queues.get(qname) if qname is not None else None
        if entry is None:
            return
        if entry.delegate is not None and job is not None:
            entry.delegate.on_job_state_change(job, new_state)
        else:
            entry.remove(jobid)

    def on_job_push(self, job: Job) -> None:
        self._push(job)

    def _push(self, job: Job) -> None:
        if job.state != PEND:
            return
        entry = self._entry(job.queue)
        if entry is None:
            return
        self._jobs[job.jobid] = job
        self._where[job.jobid] = job.queue
        self._add(entry, job)

    def on_job_state_change(self, job: Job, new_state: str) -> None:
        if new_state == PEND:
            if job.jobid not in self._jobs:
                self._push(job)
        elif job.jobid in self._jobs:
            self._drop(job.jobid, new_state)

    def on_job_update(self, job: Job) -> None:
        if job.jobid not in self._jobs:
            return
        self._drop(job.jobid)
        self._push(job)

    # -- session -------------------------------------------------------------------------
    def begin_session(self) -> None:
        self._held = []
        for entry in self._order:
            if entry.delegate is not None:
                entry.delegate.begin_session()
            else:
                entry.tidy()
        self._cursor = self._walk()

    def next_job(self) -> Job | None:
        return next(self._cursor, None)

    def _walk(self):
        """The session's cursor, as a generator: its locals survive between ``next_job`` calls.

        A queue's readiness is checked again before every job it offers: dispatching may have
        just filled it up to MAX_RUNNING. Only its counts change during a session, never its spec,
        so a queue without MAX_RUNNING (or without a per-user limit) needs that check only once.
        """
        jobs = self._jobs
        # A job the core knows fails as it last did is left out: offering it would only call
        # ``on_pend``, so a picker that listens there (strict FCFS halts at such a job, a backfilling
        # one reserves for it) is offered every job.
        known = self.view.fails_as_before if type(self).on_pend is FcfsPicker.on_pend else None
        for entry in list(self._order):
            queue = entry.queue
            if entry.delegate is not None:
                yield from self._delegated(entry)
                continue
            if not entry.keys or not queue.is_ready():
                continue
            limited = queue.spec.max_running is not None
            per_user = queue.spec.max_running_per_user is not None
            members = entry.members
            for pos, key in enumerate(entry.keys):
                jobid = key[2]
                if members.get(jobid) != key:
                    continue
                if limited and not queue.is_ready():
                    break
                job = jobs[jobid]
                if job.state == PEND and (not per_user or queue.user_ready(job.user)):
                    if known is not None and known(job):
                        continue
                    yield job
                    if self._halt:
                        self._halt = False
                        self._held.append((entry, job, pos))
                        break

    @staticmethod
    def _delegated(entry: Any):
        """The jobs a queue's own picker offers, while the queue may dispatch."""
        while entry.queue.is_ready():
            job = entry.delegate.next_job()
            if job is None:
                return
            yield job

    def _forward(self, method: str) -> Any:
        """``method(job)`` answered by the delegate of the job's queue (None when it has no such hook)."""
        def forward(job: Job) -> Any:
            entry = self._queues.get(job.queue)
            fn = getattr(entry.hooks, method) if entry is not None and entry.hooks is not None else None
            return fn(job) if fn is not None else None
        return forward

    def held_back(self):
        """``(queue name, head, jobs behind it, the same from the back)`` for each queue whose walk
        this session stopped at a job that could not start (strict FCFS): the core tells the jobs
        behind why they were not tried. The jobs are those the walk would have offered next, in
        order (the second iterator: last first), generated lazily so the core reads only a few."""
        for entry in self._order:
            held = entry.hooks.held_back if entry.hooks is not None else None
            if held is not None:
                yield from held()
        for entry, head, pos in self._held:
            keys = entry.keys
            yield (entry.queue.name, head, self._waiting(entry, range(pos + 1, len(keys))),
                   self._waiting(entry, range(len(keys) - 1, pos, -1)))

    def _waiting(self, entry: _QueueEntry, positions: range):
        jobs, keys, members, queue = self._jobs, entry.keys, entry.members, entry.queue
        per_user = queue.spec.max_running_per_user is not None
        for i in positions:
            key = keys[i]
            if members.get(key[2]) == key:
                job = jobs[key[2]]
                if job.state == PEND and (not per_user or queue.user_ready(job.user)):
                    yield job

    def end_session(self) -> None:
        for entry in self._order:
            if entry.delegate is not None:
                entry.delegate.end_session()

    def on_dispatch(self, jobid: int) -> None:
        qname = self._where.get(jobid)
        entry = self._queues.get(qname) if qname is not None else None
        if entry is not None and entry.delegate is not None:
            entry.delegate.on_dispatch(jobid)
            self._where.pop(jobid, None)
            self._jobs.pop(jobid, None)
        else:
            self._drop(jobid)

    def on_pend(self, jobid: int) -> None:
        if not self._delegates:
            return  # FCFS keeps a pended job where it is
        qname = self._where.get(jobid)
        entry = self._queues.get(qname) if qname is not None else None
        if entry is not None and entry.delegate is not None:
            entry.delegate.on_pend(jobid)

    # -- snapshot ------------------------------------------------------------------------
    def save_state(self) -> dict[str, Any]:
        """The candidate order per queue; rebuilt identically from the hooks on load."""
        out: dict[str, Any] = {}
        for entry in self._order:
            if entry.delegate is not None:
                out[entry.queue.name] = {"delegate": entry.delegate.name, "state": entry.delegate.save_state()}
            else:
                out[entry.queue.name] = sorted(entry.members.values())
        return {"queues": out}

    def load_state(self, state: dict[str, Any]) -> None:
        for entry in self._order:
            saved = state.get("queues", {}).get(entry.queue.name)
            if isinstance(saved, dict) and entry.delegate is not None:
                entry.delegate.load_state(saved.get("state", {}))
