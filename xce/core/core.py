"""The scheduling core: typed events in, decisions out, no I/O, no mode flag.

``push_event`` applies a state event and calls the picker's state-change hooks before it
returns. ``BeginRound`` runs one session (Req 1 AC 4): ``begin_session``, then ``next_job()``
until it returns None, allocating each job and emitting DISPATCH, PREEMPT or PEND, then
``end_session``. All decisions of a session reach ``on_decision`` before ``push_event`` returns.

The core is single-threaded and deterministic: jobs, hosts and queues live in insertion-ordered
dicts or name-sorted lists, nothing iterates a set, and randomness comes only from ``self.rng``.
"""

from __future__ import annotations

import random
from itertools import islice
from operator import itemgetter
from typing import Any, Callable

from xce.core import events as ev, invariants, snapshot
from xce.core.alloc.allocator import Allocation, Allocator
from xce.core.clock import VirtualClock
from xce.core.cluster import Cluster, Pool
from xce.core.corelog import CoreLogger
from xce.core.decisions import Decision, Dispatch, Pend, PendReason, Preempt, Resume
from xce.core.gcpause import collector_paused
from xce.core.ledger import Ledger
from xce.core.model import Job, Project, Queue
from xce.core.pickers.hooks import PickerHooks
from xce.core.pickers.registry import make_picker
from xce.core.pickers.view import PickerView, set_session
from xce.core.preempt import flow, registry as preempt_policies
from xce.core.reasons import make_pend_reason, with_proof
from xce.core.resources.definitions import ResourceCatalog
from xce.core.resreq import RequestSyntaxError, parse_request
from xce.core.session import Session
from xce.core.specs import FINISHED, JOB_STATES, PEND, RUN, SSUSP, SUSPENDED, UNKWN, QueueSpec, SchedConfig

DecisionSink = Callable[[Decision], Any]
_tasks = itemgetter(1)

#: Jobs behind a strict FCFS queue's blocked head told which job it is (see ``_behind_reasons``).
BEHIND_NAMED = 50


class SchedulerCore:
    def __init__(self, on_decision: DecisionSink, seed: int = 0) -> None:
        self._on_decision = on_decision
        self.seed = seed
        self.rng = random.Random(seed)
        self.clock = VirtualClock()
        self.log = CoreLogger(self.now)
        self.config = SchedConfig()
        self.catalog = ResourceCatalog()
        self.jobs: dict[int, Job] = {}
        self.queues: dict[str, Queue] = {}
        self.projects: dict[str, Project] = {}
        self.cluster = Cluster(self.catalog, self.jobs)
        self.resource_names: dict[str, str] = dict(self.config.resource_names)
        #: Jobs holding slots (RUN, or resumed) in the order they started: the preemption candidates.
        self.running: dict[int, Job] = {}
        #: Victims suspended by preemption, waiting to be resumed.
        self.preempted: dict[int, Job] = {}
        #: Queue -> the queue-level reason its pending jobs were last told (see ``_queue_reasons``).
        self.queue_told: dict[str, tuple[PendReason, ...]] = {}
        #: Queue -> the users at its ``max_running_per_user`` whose pending jobs were last told so.
        self.users_told: dict[str, frozenset[str]] = {}
        #: Queue -> the head its jobs were last told they wait behind (strict FCFS; ``_behind_reasons``).
        self.behind_told: dict[str, int] = {}
        #: Queue -> (its head, the reasons naming it, the reasons of jobs further back): see ``_behind_reasons``.
        self._behind_words: dict[str, tuple[int, tuple[PendReason, ...], tuple[PendReason, ...]]] = {}
        #: A backfilling picker's refusal text -> its reasons, one object per text across rounds: a
        #: job refused again for the same reservation is then found told by identity (``_pend``).
        self._refusals: dict[str, tuple[PendReason, ...]] = {}
        self.ledger = Ledger(self.cluster, self.queues, self.running)
        self.session: Session | None = None
        self.rounds = 0
        self._seq = 0
        #: What pickers are handed instead of the core (``xce.core.pickers.view``).
        self._view = PickerView(self, make_picker)
        self.picker: Any = None
        self._install_picker(make_picker(self.config.job_pick_plugin))
        self._handlers: dict[type, Callable[[Any], None]] = {
            ev.ConfigPush: self._on_config, ev.JobsPush: self._on_jobs,
            ev.WorkersPush: self._on_workers, ev.ResourcesPush: self._on_resources,
            ev.ResvalsFull: self._on_resvals, ev.ResvalsDelta: self._on_resvals,
            ev.JobStateChange: self._on_state, ev.JobUpdate: self._on_update,
            ev.QueueUpdate: self._on_queue, ev.JobRusage: self._on_rusage,
            ev.BeginRound: self._on_round,
        }

    # -- public surface ------------------------------------------------------------------
    def now(self) -> int:
        return self.clock.now()

    def push_event(self, event: ev.Event) -> None:
        handler = self._handlers.get(type(event))
        if handler is None:
            raise TypeError(f"not a core event: {event!r}")
        handler(event)

    def snapshot(self) -> dict[str, Any]:
        """The full state as a JSON-able dict (what a replay file's SNAPSHOT line carries)."""
        return snapshot.dump(self)

    def save_snapshot(self, fp: Any) -> None:
        """Write the snapshot as JSON to a text file object the driver opened."""
        fp.write(snapshot.dumps(self))

    def restore(self, data: dict[str, Any]) -> None:
        snapshot.load(self, data)

    def load_snapshot(self, fp: Any) -> None:
        import json

        try:
            data = json.loads(fp.read())
        except json.JSONDecodeError as exc:
            raise snapshot.SnapshotError(f"snapshot is not valid JSON: {exc}") from exc
        except RecursionError:
            raise snapshot.SnapshotError("snapshot is not valid: JSON nested too deep") from None
        except (UnicodeDecodeError, ValueError) as exc:  # bytes that are not UTF-8, a number json refuses
            raise snapshot.SnapshotError(f"snapshot is not valid JSON text: {exc}") from None
        snapshot.load(self, data)

    def cancel(self) -> None:
        """Stop the running session at its next cancellation point (safe from any callback)."""
        if self.session is not None:
            self.session.cancelled = True

    def rank(self, job: Job) -> tuple[int, int]:
        """Preemption rank: queue priority first, then job priority."""
        queue = self.queues.get(job.queue)
        return (queue.priority if queue else 0, job.priority)

    # -- configuration -------------------------------------------------------------------
    def _check_plugins(self, queues: tuple[QueueSpec, ...], picker_name: str | None = None) -> None:
        """Refuse unknown plugin names, and pickers that break their contract, before anything
        changes (all-or-nothing)."""
        for name in dict.fromkeys((picker_name, *(q.job_pick_plugin for q in queues))):
            if name is not None:
                make_picker(name)
        for q in queues:
            preempt_policies.create(q.preempt_policy)

    def _on_config(self, e: ev.ConfigPush) -> None:
        cfg = e.config
        self._check_plugins(cfg.queues, cfg.job_pick_plugin)
        self.config = cfg
        self.resource_names = dict(cfg.resource_names)
        for rdef in cfg.resources:
            self._register_resource(rdef)
        for p in cfg.projects:
            self.projects[p.name] = Project(p)
        if cfg.job_pick_plugin != self.picker.name:
            self._replace_picker(cfg.job_pick_plugin)
        for q in cfg.queues:
            self._upsert_queue(q)
        on_config = self._hooks.on_config
        if on_config is not None:
            on_config(cfg)

    def _install_picker(self, picker: Any) -> None:
        """Make ``picker`` (from ``make_picker``) the core's, the old one torn down."""
        if self.picker is not None:
            self.picker.fini()
        self.picker = picker
        picker.init(self._view)
        self._hooks = PickerHooks(picker)

    def _queue_to_picker(self, queue: Queue) -> None:
        self.picker.on_queue_update(queue)
        # Its optional hooks are looked up again: a queue handed to another picker brings its hooks.
        self._hooks = PickerHooks(self.picker)

    def _replace_picker(self, name: str) -> None:
        new = make_picker(name)
        self._install_picker(new)
        for queue in self.queues.values():
            self._queue_to_picker(queue)
        for job in self.jobs.values():
            new.on_job_push(job)

    def _register_resource(self, rdef) -> None:
        self.catalog.register(rdef)
        if rdef.shared:
            self.cluster.release_epoch += 1
            pool = self.cluster.pools.get(rdef.name)
            if pool is None:
                self.cluster.pools[rdef.name] = Pool(total=int(rdef.total or 0))
            else:
                pool.total = int(rdef.total or 0)

    def _upsert_queue(self, spec: QueueSpec) -> None:
        queue = self.queues.get(spec.name)
        if queue is None:
            queue = self.queues[spec.name] = Queue(spec)
        else:
            queue.spec = spec
        self._queue_to_picker(queue)

    def _on_queue(self, e: ev.QueueUpdate) -> None:
        self._check_plugins((e.queue,))
        self._upsert_queue(e.queue)

    def _on_resources(self, e: ev.ResourcesPush) -> None:
        for rdef in e.resources:
            self._register_resource(rdef)

    def _on_workers(self, e: ev.WorkersPush) -> None:
        self.cluster.upsert_hosts(e.hosts)

    def _on_resvals(self, e: ev.ResvalsFull | ev.ResvalsDelta) -> None:
        self.cluster.set_values(e.values, replace=isinstance(e, ev.ResvalsFull))

    # -- jobs ----------------------------------------------------------------------------
    def _on_jobs(self, e: ev.JobsPush) -> None:
        for spec in e.jobs:
            if spec.jobid in self.jobs:
                continue
            job = Job.from_spec(spec)
            self._set_request(job, spec.request, spec.tasks)
            queue = self.queues.get(job.queue)
            if queue is None:
                # Jobs of a queue the configuration does not define wait until it is defined.
                self.log.warning("job %s names unknown queue %r; it waits until the queue is defined",
                                 job.jobid, job.queue)
                self._upsert_queue(QueueSpec(name=job.queue, active=False))
                queue = self.queues[job.queue]
            self.jobs[job.jobid] = job
            if job.state == PEND:
                queue.pending += 1
                self._joined(job.queue)
            elif job.state not in FINISHED and job.placement:
                self.ledger.recharge(job)
                if job.state in (RUN, UNKWN):
                    self.ledger.charge_slots(job)
                if job.state == SSUSP and job.preempted_by is not None:
                    self.preempted[job.jobid] = job
            self.picker.on_job_push(job)

    def _set_state(self, job: Job, new: str) -> None:
        queue = self.queues[job.queue]
        if job.state == PEND and new != PEND:
            job.last_pend = None
            job.failed_epoch = -1
            queue.pending -= 1
        elif job.state != PEND and new == PEND:
            queue.pending += 1
            self._joined(job.queue)
        job.state = new

    def _on_state(self, e: ev.JobStateChange) -> None:
        job = self.jobs.get(e.jobid)
        if job is None:
            return
        new = e.state
        if new not in JOB_STATES:
            raise ev.EventFormatError(f"JOB_STATE_CHANGE: unknown state {new!r} for job {e.jobid}")
        old = job.state
        if new == old and not (new == SSUSP and job.resume_sent):
            return
        if new in FINISHED or new == PEND:
            self.ledger.release_all(job)
            self._forget_preemption(job)
            self._set_state(job, new)
            if new in FINISHED:
                del self.jobs[job.jobid]
        elif new in SUSPENDED:
            self.ledger.release_slots(job)
            job.resume_sent = False
            self._set_state(job, new)
            if new == SSUSP and job.preempted_by is not None:
                self.preempted[job.jobid] = job
        elif new == UNKWN:
            # Its host stopped reporting: nobody knows whether it still runs, so it keeps its slots
            # and resources (never handed to another job) and is no preemption candidate.
            self._set_state(job, UNKWN)
        else:  # RUN (from UNKWN too: it still holds what it held)
            if old in SUSPENDED or job.resume_sent:
                if not job.slots_charged:
                    self.ledger.charge_slots(job)
                job.resume_sent = False
                job.preempted_by = None
                self.preempted.pop(job.jobid, None)
            elif old == PEND and not job.slots_charged:
                job.start_time = e.ts
            self._set_state(job, RUN)
        self.picker.on_job_state_change(job, new)

    def _forget_preemption(self, job: Job) -> None:
        if job.waiting_for:
            for vid in job.waiting_for:
                victim = self.jobs.get(vid)
                if victim is not None and victim.preempted_by == job.jobid and victim.state == RUN:
                    victim.preempted_by = None
            job.waiting_for = ()
        job.preempted_by = None
        job.resume_sent = False
        self.preempted.pop(job.jobid, None)

    def _on_update(self, e: ev.JobUpdate) -> None:
        job = self.jobs.get(e.jobid)
        if job is None:
            return
        # Whatever changed may change the outcome: the job is tried again rather than skipped.
        job.failed_epoch = -1
        job.cache_key = None
        if e.queue is not None and e.queue != job.queue:
            if e.queue not in self.queues:
                self._upsert_queue(QueueSpec(name=e.queue, active=False))
            if job.state == PEND:
                self.queues[job.queue].pending -= 1
                self.queues[e.queue].pending += 1
                self._joined(e.queue)
            self.ledger.move_queue(job, e.queue)
        if e.priority is not None:
            job.priority = e.priority
        if e.project is not None:
            job.project = e.project
        if e.run_limit is not None:
            job.run_limit = e.run_limit
        if (e.request is not None or e.tasks is not None) and job.state == PEND:
            # A running job keeps what it was dispatched with; the change applies to a pending one.
            self._set_request(job, job.request_text if e.request is None else e.request,
                              job.tasks if e.tasks is None else e.tasks)
        self.picker.on_job_update(job)

    @staticmethod
    def _set_request(job: Job, text: str, tasks: int) -> None:
        job.request_text, job.tasks = text, tasks
        job.cache_key = None
        try:
            job.request = parse_request(text, tasks)
            job.min_tasks = job.request.min_tasks
            job.request_error = ""
        except RequestSyntaxError as exc:
            job.request, job.request_error = None, str(exc)

    def _on_rusage(self, e: ev.JobRusage) -> None:
        job = self.jobs.get(e.jobid)
        if job is None:
            return
        job.last_usage = dict(e.usage)
        hook = self._hooks.on_job_rusage
        if hook is not None:
            hook(job, job.last_usage)
        self.ledger.reconcile(job, e.usage, self.resource_names, self.catalog)

    # -- the session ---------------------------------------------------------------------
    def _emit(self, decision: Decision) -> None:
        self._on_decision(decision)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _on_round(self, e: ev.BeginRound) -> None:
        with collector_paused():  # see xce.core.gcpause: a large round made the collector walk every job
            self._round(e)

    def _round(self, e: ev.BeginRound) -> None:
        session = self.session = Session(ts=e.ts)
        set_session(self._view, session)
        self.rounds += 1
        allocator = Allocator(self.cluster, session, lambda: session.cancelled)
        picker = self.picker
        try:
            self._resume_victims(session)
            picker.begin_session()
            next_job, schedule = picker.next_job, self._schedule
            while not session.cancelled:
                job = next_job()
                if job is None:
                    break
                schedule(job, session, allocator)
            if not session.cancelled:
                self._behind_reasons(session)
                self._queue_reasons(session)
        finally:
            picker.end_session()
            self.session = None
            set_session(self._view, None)

    def _joined(self, queue: str) -> None:
        """A job joined ``queue``'s pending jobs: it has not been told the queue's reasons yet."""
        self.queue_told.pop(queue, None)
        self.users_told.pop(queue, None)
        self.behind_told.pop(queue, None)

    def _behind_reasons(self, session: Session) -> None:
        """Tell the jobs a picker did not try because the head of their queue could not start
        (``strict_fcfs``) why: without this they keep no reason, or a stale one of their own.

        Telling every job behind the head again each time the head changes costs the whole queue
        per start (a simulated year of a busy trace: minutes), so the ``BEHIND_NAMED`` first jobs
        behind it are told which job it is, and those further back that it is the head of the
        queue, which stays true as heads change: they are told once, from the back of the queue
        until a job told so already (the jobs that joined since). A queue is looked at only when
        its head changed or a job joined it since its jobs were told.
        """
        held_back = self._hooks.held_back
        if held_back is None:
            return
        words = self._behind_words
        for queue, head, behind, from_back in held_back():
            told = self.behind_told.get(queue)
            if told == head.jobid:
                continue
            self.behind_told[queue] = head.jobid
            # The same reason objects while the head stays: a job told already is known by identity
            # (a job joining makes the queue's near jobs be walked again, nearly all told already).
            said = words.get(queue)
            if said is None or said[0] != head.jobid:
                far = said[2] if said is not None else (make_pend_reason(
                    "fcfs", detail=f"waiting behind the head of queue {queue} and at least {BEHIND_NAMED} "
                                   f"jobs after it (strict FCFS)"),)
                said = words[queue] = (head.jobid, (make_pend_reason(
                    "fcfs", detail=f"waiting behind job {head.jobid}, the head of queue {queue} (strict FCFS)"),),
                    far)
            named, far = said[1], said[2]
            near = list(islice(behind, BEHIND_NAMED))
            for job in near:
                if job.last_pend is not named:
                    self._tell_one(session, job, named)
            if told is not None or len(near) < BEHIND_NAMED:
                continue  # only the head changed: the jobs further back were told and still hold
            nearest = {j.jobid for j in near}
            for job in from_back:
                if job.jobid in nearest or job.last_pend == far:
                    break
                self._tell_one(session, job, far)

    def _tell_one(self, session: Session, job: Job, reasons: tuple[PendReason, ...]) -> None:
        if job.last_pend != reasons:
            job.failed_epoch = -1  # its own shortfall is not what it was told: try it when offered
            job.last_pend = reasons
            self._emit(Pend(ts=session.ts, seq=self._next_seq(), jobid=job.jobid, reasons=reasons))

    def _queue_reasons(self, session: Session) -> None:
        """Tell the pending jobs of a queue that dispatches nothing why (closed, inactive, at its limit).

        The picker does not offer such jobs, so without this they would keep no reason or a stale
        shortfall. A queue's jobs are walked only when its reason changes or a job joined it since
        they were told, so a blocked queue costs nothing per round; when the queue opens again its
        jobs are offered and get their own reasons (or run).
        """
        told = self.queue_told
        for name, queue in self.queues.items():
            reason = queue.block_reason()
            if reason is None or not queue.pending:
                told.pop(name, None)
                continue
            prev = told.get(name)
            if prev is not None and prev[0].text == reason:
                continue
            reasons = told[name] = (make_pend_reason("queue", detail=reason),)
            self._tell(session, name, None, reasons)
        self._user_reasons(session)

    def _user_reasons(self, session: Session) -> None:
        """Tell the pending jobs of users at their queue's ``max_running_per_user`` why they wait
        (the picker skips them). Walked only when the set of such users changes or a job joined
        the queue; a user back under the limit has their jobs offered again, which gives them
        their own reasons (or a start)."""
        told = self.users_told
        for name, queue in self.queues.items():
            limit = queue.spec.max_running_per_user
            full = frozenset(u for u, n in queue.running_by_user.items() if n >= limit) if limit else frozenset()
            if not full or not queue.pending or name in self.queue_told:
                told.pop(name, None)
                continue
            if told.get(name) == full:
                continue
            told[name] = full
            reasons = (make_pend_reason("user", detail=f"user limit: {limit} running jobs per user in queue {name} "
                                                        f"(max_running_per_user)"),)
            self._tell(session, name, full, reasons)

    def _tell(self, session: Session, queue: str, users: frozenset[str] | None,
              reasons: tuple[PendReason, ...]) -> None:
        """Pend every pending job of ``queue`` (of ``users`` only, when given) with ``reasons``."""
        for job in self.jobs.values():
            if job.queue == queue and job.state == PEND and job.last_pend != reasons and \
                    (users is None or job.user in users):
                # Its own last failure is no longer what it was told: try it when it may run again.
                job.failed_epoch = -1
                job.last_pend = reasons
                self._emit(Pend(ts=session.ts, seq=self._next_seq(), jobid=job.jobid, reasons=reasons))

    def _cache_key(self, job: Job) -> Any:
        """The unsatisfiable cache's key (Req 7 AC 1): ``{select, rusage, user, queue, project}``.

        The parsed request stands for select and rusage and more: it carries the task count, span
        and the whole composite structure, so a 1-task job is never refused for a 128-task one's
        failure. Parsed requests are interned, so identity stands for equality (the fast path the
        spec asks for; the request objects outlive the session because jobs hold them), and the
        names are interned strings (``Job.from_spec``). The tuple is built once per job and kept
        until the job changes (``_on_update``). A queue that may preempt adds the job's priority:
        which victims it may take depends on it.
        """
        key = job.cache_key
        if key is None:
            key = job.cache_key = (id(job.request), job.user, job.queue, job.project)
            if job.exclusive:  # the same request fits fewer hosts when they must run nothing else
                key = job.cache_key = (*key, True)
        if self.queues[job.queue].spec.preemptible_queues:
            return (key, job.priority)
        return key

    def _pend(self, job: Job, session: Session, reasons: tuple[PendReason, ...]) -> None:
        """Pend ``job``. A PEND is emitted when its reasons change, not every round: a pending job
        whose situation is the same costs no decision, no controller write and no replay line."""
        self.picker.on_pend(job.jobid)
        note = self._hooks.pend_note
        if note is not None:  # e.g. where and when a backfilling picker's reservation expects to start it
            extra = note(job)
            if extra is not None:
                reasons = (*reasons, extra)
        if reasons is not job.last_pend:
            # An equal tuple is kept too: the next time the same words are told, identity proves it
            # (and a backfilling picker knows a refusal was told, ``PickerView.refused_before``).
            told = reasons == job.last_pend
            job.last_pend = reasons
            if not told:
                self._emit(Pend(ts=session.ts, seq=self._next_seq(), jobid=job.jobid, reasons=reasons))

    def _schedule(self, job: Job, session: Session, allocator: Allocator) -> None:
        if job.request is None:
            self._pend(job, session, (make_pend_reason("request", detail=job.request_error),))
            return
        constraint = self._hooks.constraint
        if constraint is not None:
            limit = constraint(job)
            if limit is not None:
                self._schedule_constrained(job, session, allocator, limit)
                return
        if self._fails_as_before(job):
            self.picker.on_pend(job.jobid)
            return
        epoch = self.cluster.release_epoch
        key = self._cache_key(job)
        hit = session.unsatisfiable.get(key)
        if hit is not None:
            self._fail(job, epoch)
            self._pend(job, session, hit[0])
            return
        alloc, failed = allocator.place(job)
        if session.cancelled:
            if alloc is not None:
                allocator.rollback(alloc)
            return
        if alloc is not None:
            self._dispatch(job, alloc, session)
            return
        if job.waiting_for:
            waiting = [v for v in job.waiting_for if v in self.jobs and self.jobs[v].state == RUN]
            if waiting:
                self._pend(job, session, (make_pend_reason(
                    "preempt", detail="waiting for preempted resources of job(s) "
                    + ", ".join(map(str, waiting))),))
                return
            job.waiting_for = ()
        if self._preempt(job, session, allocator):
            return
        # The explanation depends on the request and the cluster only, not on who asks: jobs of
        # other users, queues or projects with the same request reuse it until a dispatch changes
        # the cluster (nothing else charges anything during a session).
        told = (id(job.request), True) if job.exclusive else id(job.request)
        seen = session.explained.get(told)
        if seen is not None and seen[0] == session.dispatched:
            reasons = seen[1]
        else:
            reasons = tuple(dict.fromkeys(allocator.why(job, p) for p in failed))
            session.explained[told] = (session.dispatched, reasons)
        # What later jobs with the same request are told: the same category, naming this job.
        session.unsatisfiable[key] = (tuple(with_proof(r, job.jobid) for r in reasons), job.jobid)
        self._fail(job, epoch)
        self._pend(job, session, reasons)

    def _fails_as_before(self, job: Job) -> bool:
        """Whether ``job`` cannot start now for the reason it was last told, known without the
        allocator: nothing was released since it last failed, or fewer slots are free in the whole
        cluster than it needs. Such a failure is recorded as if the job had been offered, and its
        unchanged reason is not repeated; a picker may leave the job out of the round altogether
        (``PickerView.fails_as_before``). A job whose queue may preempt is never known: its queue may
        have gained preemptible_queues since it failed (or the job moved). Any update of the job
        clears failed_epoch (``_on_update``)."""
        failed = job.failed_epoch
        if failed < 0 or job.waiting_for:
            return False
        epoch = self.cluster.release_epoch
        if failed != epoch and job.min_tasks <= self.session.free_slots(self.cluster):
            return False
        if self.queues[job.queue].spec.preemptible_queues:
            return False
        job.failed_epoch = epoch
        return True

    def _schedule_constrained(self, job: Job, session: Session, allocator: Allocator, limit: Any) -> None:
        """A backfilling picker's word on ``job``: a refusal (text: it would delay a reservation), or
        slots to keep free for reservations while the job is placed (host index -> slots).

        Held slots are charged around this one allocation and given back at once, without counting
        as a release. What fails here is not cached for other jobs (they may end before the
        reservation and be held to nothing), nor remembered in ``failed_epoch``.
        """
        if isinstance(limit, str):
            reasons = self._refusals.get(limit)
            if reasons is None:
                if len(self._refusals) >= 1024:  # one text per reserved job: old ones are not asked again
                    self._refusals.clear()
                reasons = self._refusals[limit] = (make_pend_reason("backfill", detail=limit),)
            self._pend(job, session, reasons)
            return
        cluster = self.cluster
        hosts = [i for i, n in limit.items() if n > 0]
        amounts = [limit[i] for i in hosts]
        reasons: tuple[PendReason, ...] = ()
        with cluster.neutral():
            cluster.charge_many(hosts, "slots", amounts)
            try:
                alloc, failed = allocator.place(job)
                if alloc is None:  # explained while the held slots are still held
                    reasons = tuple(dict.fromkeys(allocator.why(job, p) for p in failed))
            finally:
                cluster.charge_many(hosts, "slots", [-n for n in amounts])
        if session.cancelled:
            if alloc is not None:
                allocator.rollback(alloc)
            return
        if alloc is not None:
            self._dispatch(job, alloc, session)
            return
        self._pend(job, session, reasons)

    def _fail(self, job: Job, epoch: int) -> None:
        """Remember when the job was proven not to fit, unless preemption could change that."""
        if not self.queues[job.queue].spec.preemptible_queues:
            job.failed_epoch = epoch

    def _dispatch(self, job: Job, alloc: Allocation, session: Session) -> None:
        self.ledger.record_dispatch(job, alloc)
        if session.free_total is not None:
            session.free_total -= sum(map(_tasks, alloc.slots)) + sum(map(_tasks, alloc.claim))
        job.start_time = session.ts
        job.waiting_for = ()
        self._set_state(job, RUN)
        session.dispatched += 1
        self.picker.on_dispatch(job.jobid)
        self._emit(Dispatch(ts=session.ts, seq=self._next_seq(), jobid=job.jobid, placement=job.placement))

    # -- preemption and resume -----------------------------------------------------------
    def _preempt(self, job: Job, session: Session, allocator: Allocator) -> bool:
        victims = flow.choose_victims(self, job, allocator)
        if not victims:
            return False
        for vid in victims:
            self.jobs[vid].preempted_by = job.jobid
        job.waiting_for = victims
        self._emit(Preempt(ts=session.ts, seq=self._next_seq(), preempting_jobid=job.jobid,
                           victim_jobids=victims, signal=self.queues[job.queue].spec.preempt_signal))
        self._pend(job, session, (make_pend_reason(
            "preempt", detail="waiting for preempted resources of job(s) " + ", ".join(map(str, victims))),))
        return True

    def _resume_victims(self, session: Session) -> None:
        """Suspended victims come back before any pending job is considered (Req 6, issue #5)."""
        if not self.preempted:
            return
        for job in flow.resumable(self):
            self.ledger.charge_slots(job)
            job.resume_sent = True
            self._emit(Resume(ts=session.ts, seq=self._next_seq(), jobid=job.jobid))

    @property
    def picks_usage(self) -> bool:
        """Whether the picker reads usage ticks (``on_job_rusage``): a driver may drop a tick a later
        one makes redundant only when nothing but the ledger reads them."""
        return self._hooks.on_job_rusage is not None

    def validate(self) -> None:
        """Check the invariants (``xce.core.invariants``); raises AssertionError naming the broken one."""
        invariants.validate(self)

