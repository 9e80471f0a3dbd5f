"""The worker's rules as a state machine: events in, instructions out (Dask's ``WorkerState``).

:meth:`WorkerState.handle` does no I/O, reads no clock and starts no thread: the time comes in on
the events that need it, and everything the worker must do comes out as instructions that its shell
(:mod:`xce.worker.agent`) carries out, feeding what happens back in as events. So every rule of the
worker (an action touches only the run of the job it names, and a start of a job's new run ends
what is left of its old one first; a start delivered twice starts once; a job's reports go in
order, each naming its run; a batch the controller could not take goes again under the same
idempotency key and a finished job's record stays until its end is taken; which GPUs a job gets; which journaled jobs a restarted worker takes back; when a
run limit warns and ends a job; what a journal that cannot be written does) is tested by feeding
events, without processes, and a worker's stimuli recorded live replay to the same instructions
(:mod:`xce.worker.stimuli`).
"""

from __future__ import annotations

import signal
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xce import formats
from xce.endcodes import NODE_FAIL, RUNLIMIT
from xce.protocol.actions import Action, AttachKey, KillJob, ResumeJob, SetRunLimit, SignalJob, StartJob, SuspendJob
from xce.worker import runlimit
from xce.worker.runner import signal_number

#: The reports that say a job ended here.
_ENDS = ("finished", "start_failed")

#: How many ended jobs (and which runs of each) are remembered, against a start delivered again.
DONE_KEPT = 10_000
#: How many ended runs of one job are remembered (a job requeued over and over keeps its latest).
RUNS_KEPT = 8


# -- events: what happened ---------------------------------------------------------------------
@dataclass(frozen=True)
class Booted:
    """The worker process started: ``nonce`` makes its report keys its own."""
    host: str
    nonce: str


@dataclass(frozen=True)
class DevicesFound:
    gpu_ids: tuple[str, ...]


@dataclass(frozen=True)
class Found:
    """A job the journal holds, as a restarted worker finds it."""
    jobid: int
    alive: bool  # the very process it recorded still runs
    exited: bool  # its spawner recorded how it ended
    limits: dict[str, int]
    gpus: tuple[str, ...]
    started: float
    run: int | None = None  # which run of the job it is (None: journaled by a worker that kept none)


@dataclass(frozen=True)
class Restarted:
    found: tuple[Found, ...]
    now: float


@dataclass(frozen=True)
class ActionArrived:
    action: Action


@dataclass(frozen=True)
class JobStarted:
    jobid: int
    pid: int
    started: float
    journaled: bool  # an interactive job lives in the worker and is not journaled


@dataclass(frozen=True)
class StartFailed:
    jobid: int
    reason: str


@dataclass(frozen=True)
class JobExited:
    """Its leader is gone (or a secondary host's part ended): ``end`` is what its report says, of
    ``run`` (None: whichever run is held, for a process that did not know its run)."""
    jobid: int
    end: dict[str, Any]
    run: Any = None


@dataclass(frozen=True)
class JobDropped:
    """The shell let go of a job's process without its end being reported."""
    jobid: int


@dataclass(frozen=True)
class Leftovers:
    """At registration: runs the controller no longer has (killed, requeued, host declared down).
    ``runs`` are the runs the registration named (job id -> run): a newer run of one of those jobs,
    started since, is not a leftover."""
    jobids: tuple[int, ...]
    runs: dict[int, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchReady:
    """The poster gathered these reports (by ``seq``) for one request."""
    seqs: tuple[int, ...]


@dataclass(frozen=True)
class ReportsAnswered:
    """The controller's status for a batch (0: it could not be reached)."""
    key: str
    status: int


@dataclass(frozen=True)
class Tick:
    now: float  # wall-clock seconds: a run limit counts from the job's start as LSF's RUNLIMIT does


@dataclass(frozen=True)
class JournalFailed:
    why: str


@dataclass(frozen=True)
class JournalWritable:
    pass


@dataclass(frozen=True)
class ShuttingDown:
    stop_jobs: bool


# -- instructions: what the shell does ---------------------------------------------------------
@dataclass(frozen=True)
class Spawn:
    """Start the job (its container, then its process; only its container on a host that is not
    its first). ``limits`` are its container's; ``kept`` is what its record keeps (its run limit too)."""
    job: StartJob
    gpus: tuple[str, ...]
    limits: dict[str, int]
    kept: dict[str, int]
    secondary: bool


@dataclass(frozen=True)
class Adopt:
    jobid: int


@dataclass(frozen=True)
class WriteRecord:
    jobid: int


@dataclass(frozen=True)
class Forget:
    """Its end is on record at the controller (or it never ran): its journal record goes."""
    jobid: int


@dataclass(frozen=True)
class Release:
    """It ended: its container and spooled script go (its record stays until :class:`Forget`)."""
    jobid: int


@dataclass(frozen=True)
class Discard:
    """Kill what is left of a run the controller no longer has, and forget it, reporting nothing
    (before a newer run of the same job starts here, when one does)."""
    jobid: int


@dataclass(frozen=True)
class SignalProcs:
    """``to``: "all" its processes, its "leader" only, or its "steps" (all of them if it runs none)."""
    jobid: int
    sig: int
    to: str = "all"


@dataclass(frozen=True)
class Suspend:
    jobid: int
    sig: int


@dataclass(frozen=True)
class Resume:
    jobid: int
    sig: int


@dataclass(frozen=True)
class Terminate:
    jobid: int
    grace_s: float
    reason: str
    code: str | None = None


@dataclass(frozen=True)
class SetLimits:
    jobid: int
    limits: dict[str, int]


@dataclass(frozen=True)
class Grant:
    action: AttachKey


@dataclass(frozen=True)
class Report:
    """A job report for the poster, in the order made. ``linger``: other jobs still run here, so a
    report that frees a slot may wait a moment for company."""
    seq: int
    body: dict[str, Any]
    linger: bool = False


@dataclass(frozen=True)
class PostReports:
    key: str
    reports: tuple[dict[str, Any], ...]
    attempt: int = 1


@dataclass(frozen=True)
class Reregister:
    pass


@dataclass(frozen=True)
class CloseHost:
    """Ask the controller to give this host no new job (its load reports carry ``why``)."""
    why: str


@dataclass(frozen=True)
class OpenHost:
    pass


@dataclass(frozen=True)
class RetryJournal:
    pass


EVENTS = (Booted, DevicesFound, Found, Restarted, ActionArrived, JobStarted, StartFailed, JobExited, JobDropped,
          Leftovers, BatchReady, ReportsAnswered, Tick, JournalFailed, JournalWritable, ShuttingDown)


@dataclass(slots=True)
class _Job:
    run: Any = None
    gpus: tuple[str, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    secondary: bool = False
    warned: bool = False
    ending: bool = False  # the worker itself is ending it: no run limit applies any more
    said: bool = False  # its start is reported (or needs no report): its end may be
    end: dict[str, Any] | None = None  # an end seen before its start was reported: reported after it


class WorkerState:
    """What a worker knows about its jobs and reports, and the rules that change it."""

    def __init__(self) -> None:
        self.host = ""
        self.nonce = ""
        self.gpu_ids: tuple[str, ...] = ()
        self.jobs: dict[int, _Job] = {}
        #: Recently ended jobs and which runs of each: a re-delivered start of such a run is ignored.
        self.done: OrderedDict[int, tuple[Any, ...]] = OrderedDict()
        #: Starts waiting for devices that jobs being ended here still hold (in arrival order).
        self.parked: OrderedDict[int, StartJob] = OrderedDict()
        #: Why the journal cannot be written (None: it can): the host is closed to new jobs meanwhile.
        self.closed: str | None = None
        self._seq = 0
        self._made: dict[int, dict[str, Any]] = {}  # reports made, not yet in a batch, by seq
        self._batches: dict[str, tuple[tuple[dict[str, Any], ...], int]] = {}  # in flight: reports, attempt
        self._nbatch = 0

    def handle(self, *events: Any) -> list[Any]:
        out: list[Any] = []
        for ev in events:
            self._ON[type(ev)](self, ev, out)
        return out

    def knows(self, jobid: int) -> bool:
        """Running here, or ended here, or waiting for its devices (its start is not still on its way)."""
        return jobid in self.jobs or jobid in self.done or jobid in self.parked

    def starting(self, jobid: int) -> bool:
        """Its start is being carried out here (its processes are being made, or it waits for its
        devices): not reported yet."""
        job = self.jobs.get(jobid)
        return jobid in self.parked or (job is not None and not job.said)

    def telling_end(self, jobid: int) -> bool:
        """How the job ended here is still on its way to the controller (reported, not yet answered):
        until it arrives, the controller does not know the job ended."""
        pending = [*self._made.values(), *(r for reports, _ in self._batches.values() for r in reports)]
        return any(r["jobid"] == jobid and r["status"] in _ENDS for r in pending)

    def runs(self) -> dict[str, Any]:
        """The run of each job held here, starting ones included, for the registration's and the
        load reports' ``runs``: the controller declares lost no run a worker still holds."""
        held = {j: e.run for j, e in self.jobs.items()}
        held.update((j, a.run) for j, a in self.parked.items())
        return {str(j): run for j, run in sorted(held.items()) if run is not None}

    # -- the worker's life -------------------------------------------------------------------
    def _booted(self, ev: Booted, out: list) -> None:
        self.host, self.nonce = ev.host, ev.nonce

    def _devices(self, ev: DevicesFound, out: list) -> None:
        self.gpu_ids = tuple(ev.gpu_ids)

    def _restarted(self, ev: Restarted, out: list) -> None:
        """Jobs still running, or ended with their status on record, are taken back (and reported
        as they end); the rest ended unseen and the controller records them lost. A job past its
        warning time counts as warned: it cannot be known whether it was, and a second warning
        could make it checkpoint twice."""
        for f in ev.found:
            if not (f.alive or f.exited):
                out.append(Forget(f.jobid))
                continue
            started = f.started or ev.now
            self.jobs[f.jobid] = _Job(run=f.run, gpus=tuple(f.gpus), limits=dict(f.limits), started=started,
                                      said=True, warned=runlimit.warning_due(f.limits, ev.now - started))
            out.append(Adopt(f.jobid))

    def _leftovers(self, ev: Leftovers, out: list) -> None:
        for jobid in ev.jobids:
            job = self.jobs.get(jobid)
            if job is not None and ev.runs.get(jobid) != job.run:
                continue  # a run started after the registration: not the one the answer is about
            if self.jobs.pop(jobid, None) is not None:
                self._remember_done(jobid, None)
                out.append(Discard(jobid))

    def _shutting_down(self, ev: ShuttingDown, out: list) -> None:
        if ev.stop_jobs:
            for jobid, job in self.jobs.items():
                job.ending = True
                out.append(Terminate(jobid, 2.0, f"killed: worker {self.host} shut down", NODE_FAIL))

    # -- actions -----------------------------------------------------------------------------
    def _action(self, ev: ActionArrived, out: list) -> None:
        self._ACTIONS[type(ev.action)](self, ev.action, out)

    def _held(self, a: Action) -> _Job | None:
        """The run ``a`` is about, if it is held here: an action for another run of the job (one
        that ended here, or that the controller has since requeued and dispatched again) touches
        nothing. An action or a run without a run number (older peers) matches by job alone."""
        job = self.jobs.get(a.jobid)
        if job is None or (a.run is not None and job.run is not None and a.run != job.run):
            return None
        return job

    def _start(self, a: StartJob, out: list) -> None:
        """Actions come at least once: a start of the run held here, or of the run that ended here,
        is ignored. A start of another run of a job held here means the controller has ended the
        held run (requeued, then dispatched here again): what is left of it goes, unreported, before
        the new run starts, so that neither's end is taken for the other's. A GPU request is per
        task: this host's devices are for the tasks it holds."""
        jobid = a.jobid
        held = self.jobs.get(jobid)
        if (held is not None and self._held(a) is held) or a.run in self.done.get(jobid, ()):
            return
        if held is not None:
            del self.jobs[jobid]
            self._remember_done(jobid, held.run)
            out.append(Discard(jobid))
        placement = a.placement or [(self.host, a.tasks)]
        limits = {k: int(v) for k, v in a.limits.items() if isinstance(v, int)}
        here = sum(int(n) for h, n in placement if h == self.host)
        want = int(a.requests.get("xce.io/gpu", 0) or 0) * here + (int(a.host_requests.get("xce.io/gpu", 0) or 0)
                                                                   if here else 0)
        busy = {g for job in self.jobs.values() for g in job.gpus}
        free = [g for g in sorted(self.gpu_ids, key=int) if g not in busy]  # lowest first: reproducible
        leaving = sum(len(job.gpus) for job in self.jobs.values() if job.ending)
        if len(free) < want <= len(free) + leaving:
            # The controller freed them when the job holding them ended on its head host; its tasks
            # here are being killed now (its kill came before this start): the start waits for them.
            self.parked[jobid] = a
            return
        if len(free) < want:
            self._remember_done(jobid, a.run)
            self._report(out, jobid, a.run, status="start_failed",
                         reason=f"the job asks for {want} GPU(s) (xce.io/gpu) but only {len(free)} of "
                                f"{len(self.gpu_ids)} are free on this host")
            return
        secondary = placement[0][0] != self.host
        kept = dict(limits)
        if not secondary:
            runlimit.remember(kept, {"run_limit": a.run_limit, "options": a.options})
        gpus = tuple(free[:want])
        self.jobs[jobid] = _Job(run=a.run, gpus=gpus, limits=kept, secondary=secondary, said=secondary)
        out.append(Spawn(a, gpus, limits, kept, secondary))

    def _suspend(self, a: SuspendJob, out: list) -> None:
        if self._held(a) is not None:
            out.append(Suspend(a.jobid, signal_number(a.signal, signal.SIGSTOP)))
            self._report(out, a.jobid, status="suspended", reason=a.reason)

    def _resume(self, a: ResumeJob, out: list) -> None:
        if self._held(a) is not None:
            out.append(Resume(a.jobid, signal_number(a.signal, signal.SIGCONT)))
            self._report(out, a.jobid, status="resumed", reason=a.reason)

    def _kill(self, a: KillJob, out: list) -> None:
        waiting = self.parked.get(a.jobid)
        if waiting is not None and (a.run is None or waiting.run is None or a.run == waiting.run):
            del self.parked[a.jobid]  # it never started: nothing to stop, and it must not start now
            self._remember_done(a.jobid, waiting.run)
            self._report(out, a.jobid, waiting.run, status="start_failed",
                         reason=f"{a.reason or 'killed'} before its devices were free")
            return
        job = self._held(a)
        if job is not None:
            job.ending = True
            out.append(Terminate(a.jobid, a.grace_s, a.reason or "killed"))

    def _signal(self, a: SignalJob, out: list) -> None:
        """``xce kill -s``: the job's state follows what its processes do, so nothing is reported."""
        if self._held(a) is not None:
            out.append(SignalProcs(a.jobid, signal_number(a.signal, signal.SIGTERM)))

    def _attach(self, a: AttachKey, out: list) -> None:
        out.append(Grant(a))

    def _run_limit(self, a: SetRunLimit, out: list) -> None:
        """``xce modify -W``: enforced from now on, and journaled so a restart keeps it."""
        job = self._held(a)
        if job is not None:
            runlimit.change(job.limits, a.run_limit)
            out += [SetLimits(a.jobid, dict(job.limits)), WriteRecord(a.jobid)]

    # -- the jobs' processes -----------------------------------------------------------------
    def _started(self, ev: JobStarted, out: list) -> None:
        """Recorded before it is reported, and reported before its end: a short job's end, seen
        before its start was reported, neither comes first nor leaves a record behind."""
        job = self.jobs.get(ev.jobid)
        if job is None or job.said:
            return
        job.started, job.said = ev.started, True
        if ev.journaled:
            out.append(WriteRecord(ev.jobid))
        self._report(out, ev.jobid, status="started", pid=ev.pid)
        if job.end is not None:
            self._exited(JobExited(ev.jobid, job.end), out)

    def _start_failed(self, ev: StartFailed, out: list) -> None:
        job = self.jobs.pop(ev.jobid, None)
        self._remember_done(ev.jobid, job.run if job else None)
        self._report(out, ev.jobid, job.run if job else None, status="start_failed", reason=ev.reason)
        self._unpark(job, out)

    def _exited(self, ev: JobExited, out: list) -> None:
        job = self.jobs.get(ev.jobid)
        if job is None or (ev.run is not None and job.run is not None and ev.run != job.run):
            return  # the end of a run discarded for a newer one (seen as the newer one started) is not its end
        if not job.said:
            job.end = ev.end
            return
        del self.jobs[ev.jobid]
        self._remember_done(ev.jobid, job.run)
        out.append(Release(ev.jobid))
        self._report(out, ev.jobid, job.run, status="finished", **ev.end)
        self._unpark(job, out)

    def _dropped(self, ev: JobDropped, out: list) -> None:
        job = self.jobs.pop(ev.jobid, None)
        if job is not None:
            self._remember_done(ev.jobid, job.run)
            self._unpark(job, out)

    def _unpark(self, gone: _Job | None, out: list) -> None:
        """A job that held devices is gone: the starts waiting for devices try again, in order (one
        that still cannot have them waits on, or fails if no ending job could free enough)."""
        if gone is None or not gone.gpus or not self.parked:
            return
        waiting, self.parked = list(self.parked.values()), OrderedDict()
        for a in waiting:
            self._start(a, out)

    def _tick(self, ev: Tick, out: list) -> None:
        """A run limit warns once, that long before it (to the batch shell only, or to the job's
        steps, as Slurm does), and at the limit ends the job: SIGTERM, SIGKILL after a grace."""
        for jobid, job in self.jobs.items():
            limit = job.limits.get(runlimit.RUN_LIMIT_KEY)
            if not limit or job.secondary or job.ending or not job.said:  # not said: still starting
                continue
            elapsed = ev.now - job.started
            if not job.warned and runlimit.warning_due(job.limits, elapsed):
                job.warned = True
                to = "leader" if job.limits.get(runlimit.WARN_BATCH_KEY) else "steps"
                out.append(SignalProcs(jobid, job.limits[runlimit.WARN_SIGNAL_KEY], to))
            if elapsed >= limit:
                job.ending = True
                out.append(Terminate(jobid, runlimit.GRACE_S,
                                     f"killed: run limit {formats.hms(limit)} reached (TERM_RUNLIMIT)", RUNLIMIT))
        if self.closed is not None:
            out.append(RetryJournal())

    # -- the journal -------------------------------------------------------------------------
    def _journal_failed(self, ev: JournalFailed, out: list) -> None:
        """Running jobs go on (their records are kept in memory); the host takes no new job until
        the journal can be written again, which each tick tries."""
        if ev.why != self.closed:
            self.closed = ev.why
            out.append(CloseHost(ev.why))

    def _journal_writable(self, ev: JournalWritable, out: list) -> None:
        if self.closed is not None:
            self.closed = None
            out.append(OpenHost())

    # -- reports -----------------------------------------------------------------------------
    def _report(self, out: list, jobid: int, run: Any = None, **body: Any) -> None:
        """Every report names the run it is about (the controller takes none of an older run's news
        for a newer run's): the held run's, unless the caller knows which (a run that just ended)."""
        self._seq += 1
        job = self.jobs.get(jobid)
        run = run if run is not None else job.run if job is not None else None
        body = {"jobid": jobid, **body} if run is None else {"jobid": jobid, "run": run, **body}
        self._made[self._seq] = body
        linger = body["status"] != "started" and any(not j.secondary for j in self.jobs.values())
        out.append(Report(self._seq, body, linger))

    def _batch(self, ev: BatchReady, out: list) -> None:
        """Reports go in the order they were made, a job's ``started`` before its ``finished``."""
        reports = tuple(self._made.pop(s) for s in sorted(ev.seqs) if s in self._made)
        if not reports:
            return
        self._nbatch += 1
        key = f"{self.nonce}.{self._nbatch}"
        self._batches[key] = (reports, 1)
        out.append(PostReports(key, reports))

    def _answered(self, ev: ReportsAnswered, out: list) -> None:
        """A report is dropped only when the controller refuses it for good (a 4xx other than 404 and
        429), never on a 5xx, a 429 or a lost connection, or a finished job would stay RUN and hold
        its slot: those go again under the same key (a 404: after registering again). Once answered,
        the records of the jobs whose end it took are forgotten."""
        reports, attempt = self._batches.pop(ev.key, ((), 0))
        if not reports:
            return
        if ev.status == 0 or ev.status == 404 or ev.status == 429 or ev.status >= 500:
            if ev.status == 404:
                out.append(Reregister())
            self._batches[ev.key] = (reports, attempt + 1)
            out.append(PostReports(ev.key, reports, attempt + 1))
            return
        # The journal keeps one record per job: a newer run of it started here since keeps its own.
        out += [Forget(r["jobid"]) for r in reports if r["status"] == "finished"
                and (r["jobid"] not in self.jobs or self.jobs[r["jobid"]].run == r.get("run"))]

    def _remember_done(self, jobid: int, run: Any) -> None:
        self.done[jobid] = (*self.done.get(jobid, ())[-(RUNS_KEPT - 1):], run)
        self.done.move_to_end(jobid)
        while len(self.done) > DONE_KEPT:
            self.done.popitem(last=False)

    _ON: ClassVar[dict[type, Callable[..., None]]] = {
        Booted: _booted, DevicesFound: _devices, Restarted: _restarted, Leftovers: _leftovers,
        ShuttingDown: _shutting_down, ActionArrived: _action, JobStarted: _started, StartFailed: _start_failed,
        JobExited: _exited, JobDropped: _dropped, Tick: _tick, JournalFailed: _journal_failed,
        JournalWritable: _journal_writable, BatchReady: _batch, ReportsAnswered: _answered}
    _ACTIONS: ClassVar[dict[type, Callable[..., None]]] = {
        StartJob: _start, SuspendJob: _suspend, ResumeJob: _resume, KillJob: _kill, SignalJob: _signal,
        AttachKey: _attach, SetRunLimit: _run_limit}
