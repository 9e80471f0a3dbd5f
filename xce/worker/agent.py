"""The worker agent: registers its host, carries out the controller's actions, reports what happens.

Three threads, each with one job, so that a slow request never delays a job's start or its reaping:

* the **main thread** long-polls ``GET /v1/workers/NAME/actions`` and carries each action out
  (start, suspend, resume, kill), acknowledging it with the next poll's ``after``. The poll waits
  up to :data:`POLL_WAIT_S`: the controller answers the moment an action is queued for this host,
  so an idle worker costs it one request every half minute, not one a second (the request itself
  runs on a short-lived daemon thread, so that a stop is not held up by a poll in flight);
* the **monitor** reaps ended jobs (at once when a job's process exits, which its spawner tells,
  or a task's, which the **child watcher** thread notices with ``waitid``; otherwise every few
  tens of milliseconds, for jobs adopted after a restart), samples usage and load every report interval, and enforces memory
  limits. What it samples is sent when it says something new (usage of running jobs, a load that
  moved) and otherwise at the heartbeat interval the controller hands out at registration;
* the **poster** sends every report in the order it was made (``started`` before ``usage`` before
  ``finished``), retrying while the controller is unreachable, so nothing is lost to a blip. All
  job reports queued while a request was on its way go together in the next one: a short job's
  ``started`` and ``finished`` are one request and one transaction.

The threads decide nothing: the worker's rules are :class:`xce.worker.state.WorkerState`'s, and
each thread hands what it saw (an action, a job started or ended, the controller's answer to a batch
of reports, a tick of the clock) to the state as an event and carries out the instructions it gets
back. Actions are decoded (:mod:`xce.protocol.actions`) as they arrive; one that does not decode is
refused with an error in the worker's log.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from xce import formats
from xce.client import follow
from xce.client.transport import Response
from xce.endcodes import MEMLIMIT
from xce.procs import process_start
from xce.protocol import actions
from xce.providers.base import JobView
from xce.worker import interactive, launch, measure, runner, spawner, usage
from xce.worker.containment import Containment, Limits, ProcessGroup
from xce.worker.jobstate import JobRecord, JobStateDir, still_alive
from xce.worker.runner import JobProcess, StartError
from xce.worker.spool import Spool
from xce.worker.state import (
    ActionArrived,
    BatchReady,
    Booted,
    CloseHost,
    DevicesFound,
    Discard,
    Forget,
    Found,
    Grant,
    JobDropped,
    JobExited,
    JobStarted,
    JournalFailed,
    JournalWritable,
    Leftovers,
    OpenHost,
    Release,
    Report,
    ReportsAnswered,
    Reregister,
    Restarted,
    Resume,
    RetryJournal,
    SetLimits,
    ShuttingDown,
    SignalProcs,
    Spawn,
    StartFailed,
    Suspend,
    Terminate,
    Tick,
    WorkerState,
    WriteRecord,
)
from xce.worker.tasks import TaskServer

log = logging.getLogger("xce.worker")

REAP_INTERVAL_S = 0.05
#: How long ``started`` reports (which change nothing in the controller) wait for company: a short
#: job's ``finished`` then goes in the same request.
STARTED_HOLD_S = 0.25
#: How long a report that frees a slot waits for the next one while other jobs still run here: jobs
#: started together end together, and their reports in one request make one scheduling round and
#: one start delivery for all of them (fewer requests is what lets 2 CPUs run more jobs).
LINGER_S = 0.01
LIMIT_CHECK_S = 0.25
#: How long one action poll waits for an action (the controller answers as soon as one is queued).
POLL_WAIT_S = 25.0
#: A load index that moved by more than this fraction of its last reported value (or by more than
#: LOAD_STEP in absolute terms, for indices near zero) is reported before the next heartbeat.
LOAD_CHANGE = 0.1
LOAD_STEP = 0.25
#: The run of a kill answered to a load report that named no run of the job: no real run is -1.
NO_RUN_NAMED = -1
#: How long a re-registering worker waits for a run the controller gave up on to end once killed.
DISCARD_WAIT_S = 10.0


class RegistrationRefused(Exception):
    """The controller refused this worker's registration (422); the message lists why."""


class _Handles(dict):
    """The processes of the jobs held here, by job id. Letting go of one is news to the worker's
    state (its devices are free again), whoever lets go."""

    def __init__(self, dropped: Callable[[int], None]) -> None:
        super().__init__()
        self._dropped = dropped

    def pop(self, jobid: int, *default: Any) -> Any:
        jp = super().pop(jobid, *default)
        self._dropped(jobid)
        return jp

    def take(self, jobid: int) -> Any:
        """Let go of a run the state has let go of already (ended, or discarded for a newer run of
        the same job, which the news of a drop would be taken for)."""
        return super().pop(jobid, None)


class Agent:
    """The shell around :class:`~xce.worker.state.WorkerState`: its threads carry out the state's
    instructions and feed back what came of them as events. Events from every thread go through
    one turnstile (:meth:`_feed`), so the state sees one event at a time, in the order they came."""

    def __init__(self, url: str, token: str, *, name: str, slots: int | None = None, job_state: Path,
                 work_dir: str | None = None, report_interval: float = 3.0, run_as_self: bool = False,
                 allow_root_jobs: bool = False, stop_jobs_on_exit: bool = False, ca_file: str | None = None,
                 box: Containment | None = None, pids_max: int | None = None, task_port: int = 0,
                 spool_dir: Path | None = None, record: Callable[[Any, list[Any]], None] | None = None,
                 features: tuple[str, ...] = (), model: str | None = None, host_type: str | None = None,
                 fake_gpus: tuple[str, int] | None = None) -> None:
        self.url = url
        #: What the worker's flags say of its host (``--feature``, ``--model``, ``--type``): registered with
        #: its measurements; the configuration's ``[hosts.NAME]`` wins over the model and type, and adds features.
        self.features, self.model, self.host_type = tuple(features), model, host_type
        #: (model, count) of the fake GPUs it advertises instead of NVML's (``--fake-gpus``).
        self.fake_gpus = fake_gpus
        self.ca_file = ca_file
        self.token = token
        self.name = name
        self.slots = slots
        self.work_dir = work_dir
        self.report_interval = report_interval
        self.run_as_self = run_as_self
        self.allow_root_jobs = allow_root_jobs
        self.stop_jobs_on_exit = stop_jobs_on_exit
        self.journal = JobStateDir(job_state)
        #: The jobs' spooled scripts (:mod:`xce.worker.spool`).
        self.spool = Spool(spool_dir or job_state.parent / "spool", switch_users=os.getuid() == 0 and not run_as_self)
        #: Holds each job's processes together (a control group where the host offers one).
        self.box: Containment = box or ProcessGroup("none chosen")
        self.pids_max = pids_max
        self.state = WorkerState()
        #: Events not yet handled (fed while another was being handled, by this thread or another).
        self._pending: deque[Any] = deque()
        self._turn = threading.RLock()
        self._draining = False
        #: Called with each event and the state's instructions for it (a recording of the stimuli).
        self._record = record
        self.jobs: _Handles = _Handles(lambda jobid: self._feed(JobDropped(jobid)))
        #: Ended jobs whose end the controller does not have yet: their spawner keeps their status.
        self._ended: dict[int, JobProcess] = {}
        #: (kind, path, body, report): job reports (the state's :class:`Report`) and load reports.
        self.outbox: queue.Queue[tuple[str, str, dict[str, Any], Report | None] | None] = queue.Queue()
        self.stopping = threading.Event()
        self.sampler = measure.LoadSampler()
        self.rss_name = "memory_rss"
        self.after = 0
        #: Seconds between load reports that say nothing new (the controller's ``heartbeat_interval``).
        self.heartbeat_s = report_interval
        self._sent_load: dict[str, Any] | None = None
        self._next_beat = 0.0
        #: Why the host is closed to new jobs (the state's :class:`CloseHost`), said in each load report.
        self.trouble: str | None = None
        self.need_register = threading.Event()
        #: Reads the utilisation of the GPUs jobs hold, for their usage ticks (monitor thread only).
        self.gpu_sampler = usage.GpuSampler()
        #: Providers that measure their resource per job (set at registration, with the providers).
        self.job_meters = usage.JobMeters([])
        #: Providers that hold jobs to ``--limit`` on their resource, by resource name.
        self.enforcers: dict[str, Any] = {}
        #: Steps run as root on each job's process before it switches to the job's owner (see
        #: :data:`xce.worker.launch.PrepareStep`), given the job (the start action's ``job``).
        self.prepare: Callable[[dict[str, Any]], list[launch.PrepareStep]] = lambda job: []
        self.child_exited = threading.Event()  # the child watcher saw a process end: reap now
        self.reaped = threading.Event()
        self.child_started = threading.Event()
        spawner.on_exit.append(self.child_exited.set)  # a job forked by the spawner ended
        #: Starts the tasks of parallel jobs for ``xce launch`` (:mod:`xce.worker.tasks`).
        self.tasks = TaskServer(self, task_port)
        self._feed(Booted(name, os.urandom(8).hex()))

    @property
    def gpu_ids(self) -> list[str]:
        return list(self.state.gpu_ids)

    @gpu_ids.setter
    def gpu_ids(self, ids: list[str]) -> None:
        self._feed(DevicesFound(tuple(ids)))

    def _client(self) -> follow.Session:
        # Several controllers (``--url a,b``): every request goes to the leader, through a takeover.
        return follow.Session(self.url, self.token, timeout=30.0, ca_file=self.ca_file)

    # -- the turnstile -----------------------------------------------------------------------
    def _feed(self, *events: Any) -> list[Any]:
        """Hand ``events`` to the state and carry out its instructions, which may feed more events
        (handled after them, in turn). Returns the instructions the feeding thread carries out
        itself, after its turn, since they take long and nothing need wait for them: a start (the
        main thread's: the monitor reaps on meanwhile), a batch of reports to post (the poster's),
        jobs to adopt (the starting worker's)."""
        mine: list[Any] = []
        with self._turn:
            self._pending.extend(events)
            if self._draining:  # fed while carrying out an instruction: handled in this same turn
                return mine
            self._draining = True
            try:
                while self._pending:
                    ev = self._pending.popleft()
                    instructions = self.state.handle(ev)
                    if self._record is not None:
                        self._record(ev, instructions)
                    for ins in instructions:
                        do = self._DO.get(type(ins))
                        if do is None:
                            mine.append(ins)
                        else:
                            self._pending.extend(do(self, ins))
            finally:
                self._draining = False
        return mine

    # -- registration ----------------------------------------------------------------------
    def register(self, http: follow.Session) -> dict[str, Any]:
        from xce.providers.manager import default_manager

        manager, errors = default_manager(fake_gpus=self.fake_gpus)
        resources = measure.static_resources(manager, errors, self.slots)
        for e in errors:
            log.warning("resource provider left out: %s", e)
        gpu = manager.get("xce.io/gpu")
        self.gpu_ids = gpu.visible_devices() if gpu is not None else []
        if self.gpu_ids and getattr(gpu, "model", None):
            resources["gpu_model"] = gpu.model
        resources.update({k: v for k, v in (("model", self.model), ("type", self.host_type)) if v})
        self.job_meters = usage.JobMeters([p for p in manager if p.resource_name in resources])
        self.enforcers = {p.resource_name: p for p in manager
                          if p.resource_name in resources and getattr(p, "enforces_limits", False)}
        running = sorted(self.jobs)
        body = {"name": self.name, "resources": resources, "load": self.sampler.sample(), "running": running,
                "runs": {j: run for j, run in self.state.runs().items() if int(j) in self.jobs},
                "containment": self.box.kind, "enforces": sorted(self.enforcers), "features": list(self.features)}
        if self.tasks.address:
            body["task_address"] = self.tasks.address
        while True:
            try:
                r = http.post("/v1/workers/register", json=body)
            except follow.Unreachable as exc:
                if self.stopping.is_set():
                    raise SystemExit(0) from None
                log.warning("controller at %s unreachable (%s); retrying", self.url, exc)
                time.sleep(1.0)
                continue
            if r.status_code == 422:
                raise RegistrationRefused(_describe(r))
            if r.status_code >= 400:
                raise RegistrationRefused(f"HTTP {r.status_code}: {_describe(r)}")
            out = r.json()
            break
        # Leftovers the controller gave up on (the host was declared down, the job killed or requeued
        # meanwhile): gone before this worker takes any new work.
        self._feed(Leftovers(tuple(int(j) for j in out.get("kill", [])),
                             {int(j): run for j, run in body["runs"].items()}))
        for jobid in out.get("lost", []):
            log.warning("job %s was placed here but is not running: the controller recorded it as lost", jobid)
        self.heartbeat_s = float(out.get("heartbeat_interval", self.report_interval))
        self.report_interval = min(self.report_interval, self.heartbeat_s)
        self._next_beat = 0.0  # the first report after a registration goes whatever it says
        log.warning("worker %s registered with %s (slots %s, report every %.2fs, adopted %s)", self.name, self.url,
                    resources["slots"], self.report_interval, running or "no jobs")
        return out

    def _discard(self, ins: Discard) -> list[Any]:
        """End a run the controller no longer has, without reporting its end: the job may run again
        (requeued), even here, and the end of the old run must not be taken for the new one's."""
        jp = self.jobs.take(ins.jobid)
        if jp is None:
            return []
        log.warning("job %s is not running in the controller: killing what is left of it", jp.jobid)
        jp.kill_now(f"job {jp.jobid} is not running in the controller")
        deadline = time.monotonic() + DISCARD_WAIT_S
        while jp.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        self.box.remove(jp.jobid)
        self.spool.remove(jp.jobid)
        self._ended[jp.jobid] = jp
        return self._forget(Forget(jp.jobid))

    def adopt(self) -> None:
        """Take back the jobs a previous run of this worker left running; forget the rest."""
        records, found = {}, []
        for rec in self.journal.load_all():
            if rec.pid == 0:  # its start was under way: it runs if its spawner got as far as its command
                self._find_leader(rec)
            alive = still_alive(rec)
            exited = not alive and self.journal.exit_status(rec.jobid) is not None
            if alive:
                log.warning("adopted job %s (pid %s) from a previous run", rec.jobid, rec.pid)
            elif exited:  # its spawner recorded how: reported as it ended
                log.warning("job %s ended while the worker was down; reporting its exit status", rec.jobid)
            else:
                log.warning("job %s ended while the worker was down; the controller will record it lost", rec.jobid)
            records[rec.jobid] = rec
            found.append(Found(rec.jobid, alive, exited, dict(rec.limits), tuple(rec.gpus), rec.started, rec.run))
        for ins in self._feed(Restarted(tuple(found), time.time())):
            rec = records[ins.jobid]
            self.jobs[rec.jobid] = JobProcess.adopt(rec, self.box, self.journal.exit_path(rec.jobid))
        # Containers of jobs not adopted are leftovers (their leader ended while the worker was
        # down): whatever still runs in them is killed now, before any new job is accepted.
        for jobid in self.box.start(set(self.jobs)):
            log.warning("removed the container of job %s left by a previous run (its processes killed)", jobid)
        self.spool.keep_only(set(self.jobs))

    def _find_leader(self, rec: JobRecord) -> None:
        """A job journaled as starting (a worker killed while its spawner, which outlives it, started
        it): its leader is the member of its container that leads its own process group. Found, the
        job is adopted and reported as running, not declared lost; not found, it never ran."""
        for pid in self.box.members(rec.jobid):
            try:
                if os.getpgid(pid) != pid:
                    continue
            except OSError:
                continue
            rec.pid = rec.pgid = pid
            rec.create_time = process_start(pid) or 0.0
            rec.started = rec.create_time or time.time()
            log.warning("job %s was being started when the worker stopped: its leader is pid %s", rec.jobid, pid)
            return

    # -- actions ---------------------------------------------------------------------------
    def handle(self, message: dict[str, Any]) -> None:
        """One action from the controller. One that does not decode is refused with an error in the
        worker's log (the controller's and the worker's ideas of the protocol differ: a person must
        look), never carried out in part."""
        try:
            action = actions.decode(message)
        except actions.ProtocolError as exc:
            log.error("action %s refused: %s", message.get("id") if isinstance(message, dict) else message, exc)
            return
        for spawn in self._feed(ActionArrived(action)):
            self._feed(*self._spawn(spawn))

    def _start(self, job: dict[str, Any]) -> None:
        """Start ``job`` as the controller's start action with it would."""
        self.handle({"kind": "start", "job": job})

    def _spawn(self, ins: Spawn) -> list[Any]:
        a = ins.job
        jobid = a.jobid
        job = actions.encode(a)["job"]
        if ins.secondary:
            # Not the first host of a parallel job: its container waits here for its tasks.
            try:
                self._contain(jobid, ins.limits, a.process_limit)
            except StartError as exc:
                return [StartFailed(jobid, str(exc))]
            self.jobs[jobid] = JobProcess(jobid, 0, 0, 0.0, dict(ins.kept), list(ins.gpus), secondary=True,
                                          box=self.box, job=job, run=a.run)
            return []
        # An interactive job's terminal is its user's (xce submit -Is, xce.worker.interactive): it lives
        # in this worker, so the job is this worker's child, not its spawner's, and is not journaled.
        tty = interactive.is_interactive(job)
        exit_file = None if tty else self.journal.exit_path(jobid)
        near = -1
        try:
            ident = runner.resolve_identity(a.user, run_as_self=self.run_as_self, allow_root=self.allow_root_jobs)
            env = runner.job_env(job, ident, host=self.name, gpus=list(ins.gpus), host_slots=self.slots)
            if tty:
                env.setdefault("TERM", "xterm")
            if a.script is not None:  # its spooled script: this host's copy, run under its #! line
                job = dict(job, command=self._spooled(jobid, job, ident))
            kernel = self._contain(jobid, ins.limits, a.process_limit)
            files = self.box.procs_files(jobid)
            # Its control groups' files: written by the spawner itself, in the exchange that starts it.
            home = self.box.home_files(jobid) if kernel.admit_visitor() and not tty else None
            join: launch.PrepareStep = launch.Join(files, home) if files else lambda pid: self.box.join(jobid, pid)
            spec = runner.launch_spec(job, env=env, ident=ident, work_dir=self.work_dir,
                                      prepare=[join, *self.prepare(job)], exit_file=exit_file)
            if tty:
                near, far = launch.terminal(ident)
                try:
                    popen = launch.launch(dataclasses.replace(spec, tty=far))
                finally:
                    os.close(far)
            else:
                # Journaled before its spawner may start it (the spawner outlives a killed worker):
                # a restarted worker finds it and adopts it if it runs, so a job whose command has
                # started is never declared lost for want of a record.
                self.journal.save(JobRecord(jobid, 0, 0, 0.0, dict(ins.kept), list(ins.gpus), 0.0, a.run))
                popen = launch.launch(spec)
        except StartError as exc:
            if near >= 0:
                os.close(near)
            log.warning("job %s could not start: %s", jobid, exc)
            self.box.remove(jobid)
            self.journal.remove(jobid)
            self.spool.remove(jobid)
            return [StartFailed(jobid, str(exc))]
        ctime = process_start(popen.pid) or time.time()  # None: it already exited (the reaper reports it)
        jp = JobProcess(jobid, popen.pid, popen.pid, ctime, dict(ins.kept), list(ins.gpus), popen, box=self.box,
                        job=job, exit_file=exit_file, run=a.run)
        if tty:  # its terminal is ready for its user before the controller hears it started
            interactive.watch(self, jp, near)
        self.jobs[jobid] = jp
        self.child_started.set()
        if popen.poll() is not None:  # it already ended (its spawner told before it was listed here)
            self.child_exited.set()
        return [JobStarted(jobid, popen.pid, jp.started, journaled=not tty)]

    def _spooled(self, jobid: int, job: dict[str, Any], ident: runner.Identity) -> list[str]:
        """The command that runs the job's own copy of its script."""
        try:
            return self.spool.argv(jobid, job["script"], list(job["command"][1:]), ident.uid, ident.gid)
        except OSError as exc:
            raise StartError(f"cannot write the job's script into the spool {self.spool.path} on {self.name}: "
                             f"{exc.strerror or exc}") from None

    def _contain(self, jobid: int, limits: dict[str, int], process_limit: int | None) -> Limits:
        """The job's container with its kernel limits (returned), made before its first process exists."""
        kernel = Limits.of(limits, *(n for n in (self.pids_max, process_limit) if n))
        try:
            self.box.create(jobid, kernel)
        except OSError as exc:
            self.box.remove(jobid)
            raise StartError(f"cannot create the job's control group on {self.name}: {exc.strerror or exc}") from None
        for name in sorted(set(limits) - actions.ENFORCED_LIMITS):  # the rest: a provider's (submission refused others)
            provider = self.enforcers.get(name)
            try:
                if provider is None:
                    raise RuntimeError("no provider on this host enforces it")
                provider.enforce_limit(JobView(jobid, ()), limits[name])
            except Exception as exc:
                self.box.remove(jobid)
                raise StartError(f"cannot enforce --limit {name}={limits[name]} on {self.name}: {exc}") from None
        return kernel

    def attach_later(self, jobid: int) -> bool:
        """Whether an attach that found no terminal is worth retrying: the job's start may still be on
        its way here or being carried out (its terminal is made with its processes, after the state
        took the start), or how it ended on its way to the controller (whose answer the user's ``xce``
        then reads: a job that could not start says why)."""
        with self._turn:  # asked from a task-server thread: the state is read between events
            s = self.state
            return not s.knows(jobid) or s.starting(jobid) or s.telling_end(jobid)

    # -- carrying out instructions ---------------------------------------------------------
    def _journal_news(self) -> list[Any]:
        """What the journal's last write says about it, for the state (which closes the host)."""
        if self.journal.trouble is not None:
            return [JournalFailed(self.journal.trouble)]
        return [JournalWritable()] if self.state.closed is not None else []

    def _write_record(self, ins: WriteRecord) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is None:
            return []
        rec = jp.record()
        held = self.state.jobs.get(ins.jobid)
        rec.run = held.run if held is not None else None  # a restarted worker reports it for its run
        self.journal.save(rec)
        return self._journal_news()

    def _forget(self, ins: Forget) -> list[Any]:
        """Its record and its spawner's note of how it ended stayed until the controller had its end:
        a worker killed before that found both again and reported it then."""
        self.journal.remove(ins.jobid)
        jp = self._ended.pop(ins.jobid, None)
        forget = getattr(jp.popen, "forget", None) if jp is not None else None
        if forget is not None:
            forget()
        return self._journal_news()

    def _release(self, ins: Release) -> list[Any]:
        jp = self.jobs.take(ins.jobid)
        if jp is not None:
            self._ended[ins.jobid] = jp
        self.box.remove(ins.jobid)
        self.spool.remove(ins.jobid)
        return []

    def _signal(self, ins: SignalProcs) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is None:
            return []
        if ins.to == "leader":
            jp.signal_leader(ins.sig)
        elif ins.to == "steps" and jp.steps:
            jp.signal_steps(ins.sig)
        else:
            jp.signal(ins.sig)
        return []

    def _suspend(self, ins: Suspend) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is not None:
            jp.suspend(ins.sig)
        return []

    def _resume(self, ins: Resume) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is not None:
            jp.resume(ins.sig)
        return []

    def _terminate(self, ins: Terminate) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is not None:
            if ins.code is not None:
                log.warning("job %s %s", ins.jobid, ins.reason)
            jp.terminate(ins.grace_s, ins.reason, ins.code)
        return []

    def _set_limits(self, ins: SetLimits) -> list[Any]:
        jp = self.jobs.get(ins.jobid)
        if jp is not None:
            jp.limits = dict(ins.limits)
        return []

    def _grant(self, ins: Grant) -> list[Any]:
        interactive.grant(self, ins.action)
        return []

    def _queue_report(self, ins: Report) -> list[Any]:
        self.outbox.put(("status", "", ins.body, ins))
        return []

    def _reregister(self, ins: Reregister) -> list[Any]:
        self.need_register.set()
        return []

    def _close_host(self, ins: CloseHost) -> list[Any]:
        self.trouble = ins.why
        return []

    def _open_host(self, ins: OpenHost) -> list[Any]:
        self.trouble = None
        return []

    def _retry_journal(self, ins: RetryJournal) -> list[Any]:
        self.journal.retry()  # recovers by itself once there is room
        return self._journal_news()

    # -- monitoring ------------------------------------------------------------------------
    def monitor(self) -> None:
        next_report = 0.0
        next_limits = 0.0
        while not self.stopping.is_set() or self.jobs:
            now = time.monotonic()
            self._reap()
            if now >= next_limits:
                next_limits = now + LIMIT_CHECK_S
                self._check_limits()
                self._feed(Tick(time.time()))
            if now >= next_report and not self.stopping.is_set():
                next_report = now + self.report_interval
                self._report()
            self.reaped.set()
            if self.child_exited.wait(REAP_INTERVAL_S):
                self.child_exited.clear()

    def child_watcher(self) -> None:
        """Wake the monitor the moment a child process (a job's leader) ends, so that a short job's
        slot is reported free at once rather than at the next reap tick. ``WNOWAIT`` leaves the
        reaping itself to the job's ``Popen``."""
        while not self.stopping.is_set():
            try:
                os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:  # no child yet: wait for a start
                if self.child_started.wait(1.0):
                    self.child_started.clear()
                continue
            except InterruptedError:
                continue
            self.reaped.clear()
            self.child_exited.set()
            # The same zombie is seen until the monitor reaps it (or, if it is no job, for a while).
            self.reaped.wait(REAP_INTERVAL_S)

    def _reap(self) -> None:
        for jobid, jp in tuple(self.jobs.items()):
            # Under the state's turn, and only while it is still the job's handle: a run discarded
            # for a newer one of the same job shares its container, and polling the old run's end
            # (which sweeps that container) must not kill the newer run's processes.
            with self._turn:
                end = jp.poll() if self.jobs.get(jobid) is jp else None
            if end is None:
                continue
            counted = self.box.usage(jobid)  # read before the group goes
            body = {"exit_code": end["exit_code"], "signal": end["signal"], "reason": end["reason"]}
            if end.get("end"):  # how it ended, where the worker knows (xce.endcodes)
                body["end"] = end["end"]
            if counted is not None:
                # The container's totals: all the CPU time, and the memory peak the kernel saw
                # (what the memory limit is measured against), which ticks between samples miss.
                body["usage"] = counted.tick(ended=True)
            self._feed(JobExited(jobid, body, jp.run))

    def _check_limits(self) -> None:
        if self.box.enforces_memory:  # the kernel does it, without overshoot; a secondary hears of its kills here
            for jp in tuple(self.jobs.values()):
                jp.check_memory()
            return
        limited = [jp for jp in tuple(self.jobs.values())
                   if jp.limits.get("mem") and not jp.secondary and not jp.end_reason]
        for jp in limited:
            rss = usage.sample(jp.pid)["memory_rss"]
            cap = jp.limits["mem"]
            if rss > cap:
                why = f"killed: memory {formats.size(rss)} exceeded its limit {formats.size(cap)}"
                log.warning("job %s %s", jp.jobid, why)
                jp.kill_now(why, MEMLIMIT)

    def _report(self) -> None:
        running = tuple(self.jobs.values())
        ticks = {}
        for jp in running:
            counted = self.box.usage(jp.jobid)
            if counted is not None:
                tick = counted.tick()
            elif jp.secondary:
                continue  # no leader to walk from: counted only where the container counts
            else:
                tick = usage.sample(jp.pid, jp.pgid, whole_group=jp.popen is None)
            if jp.gpus:
                busy = self.gpu_sampler.sample(jp.gpus)
                if busy is not None:  # not measurable here: no figure rather than a made-up 0
                    tick[usage.GPU_UTIL] = busy
            if self.job_meters.providers:
                tick.update(self.job_meters.measure(jp.jobid, self.box.members(jp.jobid), jp.gpus))
            ticks[str(jp.jobid)] = tick
        if not any(jp.gpus for jp in running):
            self.gpu_sampler.close()
        with self._turn:  # the runs the state holds, starting ones too: none of them is declared lost
            runs = self.state.runs()
        body = {"load": self.sampler.sample(), "usage": ticks, "runs": runs}
        if self.tasks.address:
            body["task_address"] = self.tasks.address
        now = time.monotonic()
        if not ticks and not self.trouble and now < self._next_beat and \
                not load_moved(self._sent_load, body["load"]):
            return  # nothing new: the controller hears from this host at the next heartbeat
        self._sent_load = body["load"]
        self._next_beat = now + self.heartbeat_s
        self.outbox.put(("load", f"/v1/workers/{self.name}/load", body, None))

    # -- posting ---------------------------------------------------------------------------
    def poster(self) -> None:
        """Send reports in the order they were made: every job report queued since the last request
        goes in one ``reports`` request (one transaction in the controller), load reports on their own."""
        http = self._client()
        while True:
            item = self.outbox.get()
            if item is None:
                return
            batch = [item]
            start = time.monotonic()
            while True:  # everything else already queued rides along
                try:
                    nxt = self.outbox.get_nowait()
                except queue.Empty:
                    left = self._hold(batch, start)
                    if left <= 0:
                        break
                    try:
                        nxt = self.outbox.get(timeout=left)
                    except queue.Empty:
                        break
                batch.append(nxt)
            stop = batch[-1] is None
            seqs: list[int] = []
            for entry in batch:
                if entry is None:
                    continue
                _, path, body, report = entry
                if report is not None:
                    seqs.append(report.seq)
                    continue
                if seqs:
                    self._send_reports(http, seqs)
                    seqs = []
                self._send_load(http, path, body)
            if seqs:
                self._send_reports(http, seqs)
            if stop:
                return

    def _hold(self, batch: list, start: float) -> float:
        """Seconds the batch may still wait for company: ``started`` reports change nothing in the
        controller; a slot-freeing report waits a moment while other jobs still run here."""
        if any(e is None or e[3] is None for e in batch):
            return 0.0
        if all(e[2].get("status") == "started" for e in batch):
            return start + STARTED_HOLD_S - time.monotonic()
        return start + LINGER_S - time.monotonic() if batch[-1][3].linger else 0.0

    def _post(self, http: follow.Session, path: str, make_body: Callable[[], dict[str, Any]],
              key: str | None = None) -> Response:
        """One POST (raises ``follow.Unreachable``), again at once if the controller refuses the wire
        name ``memory_rss``: the core maps memory_rss to mem, so sending mem is charged the same way."""
        while True:
            r = http.post(path, json=make_body(), key=key)
            if r.status_code == 422 and self.rss_name == "memory_rss" and "memory_rss" in r.text:
                log.warning("controller refuses usage name memory_rss; reporting it as mem")
                self.rss_name = "mem"
                continue
            return r

    def _say_retry(self, why: str) -> None:
        """One warning per few seconds while the controller cannot take reports: a database outage
        must not fill the worker's log."""
        now = time.monotonic()
        if now - getattr(self, "_retry_said", 0.0) >= 5.0:
            self._retry_said = now
            log.warning("controller cannot take reports now (%s); keeping them and retrying", why.splitlines()[0])

    def _send_reports(self, http: follow.Session, seqs: list[int]) -> None:
        """Post the batch the state makes of ``seqs``, as often as the state says (it decides what
        is retried, under which key, and what is dropped)."""
        todo = self._feed(BatchReady(tuple(seqs)))
        while todo:
            post = todo.pop(0)
            try:
                r = self._post(http, f"/v1/workers/{self.name}/reports",
                               lambda reports=post.reports: {"reports": [
                                   dict(rep, usage=self._wire(rep["usage"])) if rep.get("usage") else rep
                                   for rep in reports]}, key=post.key)
            except follow.Unreachable as exc:
                self._say_retry(f"controller unreachable ({exc})")
                time.sleep(follow.backoff(post.attempt, cap=2.0, first=0.25))
                todo += self._feed(ReportsAnswered(post.key, 0))
                continue
            todo += self._feed(ReportsAnswered(post.key, r.status_code))
            if todo:  # not now: the same batch again
                self._say_retry(f"HTTP {r.status_code} {r.text[:200]}")
                time.sleep(follow.retry_after(r.headers, follow.backoff(post.attempt, cap=5.0, first=0.25)))
            elif r.status_code >= 400:
                log.warning("reports refused: HTTP %s %s", r.status_code, r.text[:300])
            else:
                for res in r.json().get("results", []):
                    if "error" in res:
                        log.warning("report on job %s refused: %s", res.get("jobid"), res["error"])

    def _send_load(self, http: follow.Session, path: str, body: dict[str, Any]) -> None:
        """A load report is not retried on a 5xx: the next one, a report interval later, says more."""
        def wire() -> dict[str, Any]:
            out = dict(body, usage={k: self._wire(v) for k, v in body["usage"].items()})
            if self.trouble:
                out["trouble"] = self.trouble  # the controller closes the host to new jobs meanwhile
            return out

        attempt = 0
        while True:
            attempt += 1
            try:
                r = self._post(http, path, wire)
                break
            except follow.Unreachable as exc:
                if self.stopping.is_set() and self.outbox.empty():
                    return
                self._say_retry(f"controller unreachable ({exc})")
                time.sleep(follow.backoff(attempt, cap=2.0, first=0.25))
        if r.status_code == 404:
            self.need_register.set()
        elif r.status_code >= 400:
            log.warning("load report refused: HTTP %s %s", r.status_code, r.text[:300])
        else:
            # The answer is about the runs this report named: a newer run started since is not touched.
            # A job the report named no run of was not held here then with one (runs() lists every
            # such job): the kill matches only a job held without a run number (an older journal).
            runs = body.get("runs") or {}
            for jobid in r.json().get("kill", []):
                run = runs.get(str(jobid), NO_RUN_NAMED)
                self._feed(ActionArrived(actions.KillJob(jobid=int(jobid), run=run, grace_s=2.0,
                                                         reason=f"job {jobid} must not run on {self.name}")))

    def _wire(self, tick: dict[str, int]) -> dict[str, int]:
        return self._rename(tick) if self.rss_name != "memory_rss" else tick

    def _rename(self, tick: dict[str, int]) -> dict[str, int]:
        return {(self.rss_name if k == "memory_rss" else k): v for k, v in tick.items()}

    # -- main loop -------------------------------------------------------------------------
    def run(self) -> int:
        self.adopt()
        self.tasks.start()
        http = self._client()
        try:
            self.register(http)
        except RegistrationRefused as exc:
            print(f"xce worker: the controller refused to register {self.name}:\n{exc}", file=sys.stderr)
            return 1
        threads = [threading.Thread(target=_vital(self.poster, "poster"), name="poster", daemon=True),
                   threading.Thread(target=_vital(self.monitor, "monitor"), name="monitor", daemon=True),
                   threading.Thread(target=_vital(self.child_watcher, "child-watcher"), name="child-watcher",
                                    daemon=True)]
        for t in threads:
            t.start()
        while not self.stopping.is_set():
            if self.need_register.is_set():
                self.need_register.clear()
                self.after = 0
                try:
                    self.register(http)
                except RegistrationRefused as exc:
                    print(f"xce worker: re-registration refused:\n{exc}", file=sys.stderr)
                    return 1
            try:
                r = self._poll(http)
                if r is None:
                    break  # stopping
            except follow.Unreachable as exc:
                log.warning("controller unreachable (%s); retrying", exc)
                self.stopping.wait(1.0)
                continue
            if r.status_code == 404:
                self.need_register.set()
                continue
            if r.status_code >= 400:
                log.warning("actions refused: HTTP %s %s", r.status_code, r.text[:300])
                self.stopping.wait(1.0)
                continue
            for action in r.json().get("actions", []):
                try:
                    self.handle(action)
                except Exception:  # one bad action must not stop the worker
                    log.exception("action %s failed", action)
                self.after = max(self.after, int(action["id"]))
        return self._shutdown(threads)

    def _poll(self, http: follow.Session) -> Response | None:
        """One long-poll for actions, on a daemon thread of its own so that a stop is not held up by
        a poll that may wait half a minute (None: the worker is stopping; the poll is left behind)."""
        out: dict[str, Any] = {}
        done = threading.Event()

        def poll() -> None:
            try:
                out["r"] = http.get(f"/v1/workers/{self.name}/actions",
                                    params={"after": self.after, "wait": POLL_WAIT_S},
                                    timeout=POLL_WAIT_S + 10)  # a paused controller: move on to the leader
            except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
                out["exc"] = exc
            finally:
                done.set()

        threading.Thread(target=poll, name="poll", daemon=True).start()
        while not done.wait(0.5):
            if self.stopping.is_set():
                return None
        if "exc" in out:
            raise out["exc"]
        return out["r"]

    def _shutdown(self, threads: list[threading.Thread]) -> int:
        self.tasks.stop()
        if self.stop_jobs_on_exit:
            self._feed(ShuttingDown(stop_jobs=True))
            threads[1].join(timeout=10)
        self.outbox.put(None)
        threads[0].join(timeout=5)
        if not self.jobs:
            spawner.stop_shared()  # out of its control group, which goes with the worker's
            self.box.close()
        log.warning("worker %s stopped (%d job(s) left running)", self.name, len(self.jobs))
        return 0

    _DO: ClassVar[dict[type, Callable[[Agent, Any], list[Any]]]] = {
        WriteRecord: _write_record, Forget: _forget, Release: _release, Discard: _discard,
        SignalProcs: _signal, Suspend: _suspend, Resume: _resume, Terminate: _terminate, SetLimits: _set_limits,
        Grant: _grant, Report: _queue_report, Reregister: _reregister, CloseHost: _close_host,
        OpenHost: _open_host, RetryJournal: _retry_journal}


#: The exit status of a worker one of whose threads died (EX_SOFTWARE): the supervisor restarts it.
THREAD_DIED = 70


def _vital(target: Callable[[], None], name: str) -> Callable[[], None]:
    """``target`` as a thread the worker cannot do without: if it raises, the whole process ends at
    once (its jobs run on, and the restarted worker adopts them from its journal), rather than
    living on with nobody reaping or reporting, which no supervisor would ever notice."""
    def run() -> None:
        try:
            target()
        except BaseException:  # noqa: BLE001 - whatever killed it, the process must not outlive it
            log.critical("the worker's %s thread died; the worker exits (status %d) to be restarted",
                         name, THREAD_DIED, exc_info=True)
            for handler in logging.getLogger().handlers:
                try:
                    handler.flush()
                except Exception:  # noqa: BLE001
                    pass
            os._exit(THREAD_DIED)

    return run


def load_moved(before: dict[str, Any] | None, now: dict[str, Any]) -> bool:
    """Whether a load sample says something the last report did not (an index moved by more than
    :data:`LOAD_CHANGE` of its value, or :data:`LOAD_STEP` near zero, or appeared)."""
    if before is None:
        return True
    for k, v in now.items():
        old = before.get(k)
        if not isinstance(old, (int, float)) or not isinstance(v, (int, float)):
            if old != v:
                return True
        elif abs(v - old) > max(LOAD_STEP, LOAD_CHANGE * abs(old)):
            return True
    return False


def _describe(r: Response) -> str:
    try:
        detail = r.json().get("detail")
    except ValueError:
        return r.text
    if isinstance(detail, list):
        return "\n".join(f"  {'.'.join(str(p) for p in e.get('loc', []) if p != 'body')}: {e.get('msg')}" for e in detail)
    return f"  {detail}"


def default_spool(state_dir: Path, name: str, run_as_self: bool) -> Path:
    """Where job scripts are spooled: a root worker's in ``/var/spool/xce/NAME`` (its state directory
    is root's alone, and a job's owner must reach its script), a personal one's beside its journal."""
    if os.getuid() == 0 and not run_as_self:
        return Path("/var/spool/xce") / name
    return state_dir / "workers" / name / "spool"


def main(*, name: str | None = None, slots: int | None = None, state_dir: str | None = None, url: str | None = None,
         token: str | None = None, work_dir: str | None = None, report_interval: float = 3.0,
         run_as_self: bool = False, allow_root_jobs: bool = False, stop_jobs_on_exit: bool = False,
         log_level: str = "WARNING", log_format: str | None = None, containment: str = "auto",
         cgroup_parent: str = "xce", pids_max: int | None = None, freeze: bool = False, task_port: int = 0,
         spool_dir: str | None = None, features: tuple[str, ...] = (), model: str | None = None,
         host_type: str | None = None, fake_gpus: str | None = None) -> int:
    from xce import logs
    from xce.client import statedir

    try:
        logs.configure(f"worker[{name or socket.gethostname()}]", log_level, log_format)
    except ValueError as exc:
        print(f"xce worker: {exc}", file=sys.stderr)
        return 2
    try:
        url, token, sd = statedir.worker_endpoint(url, token, state_dir)
    except ValueError as exc:
        print(f"xce worker: {exc}", file=sys.stderr)
        return 2
    name = name or socket.gethostname()
    from xce.core.features import feature_problem
    from xce.providers.gpu import parse_fake_gpus

    try:
        fake = parse_fake_gpus(fake_gpus) if fake_gpus else None
    except ValueError as exc:
        print(f"xce worker: --fake-gpus: {exc}", file=sys.stderr)
        return 2
    features = tuple(f for given in features for f in given.split(",") if f)
    bad = next((p for p in map(feature_problem, features) if p), None)
    if bad is not None:
        print(f"xce worker: --feature: {bad}", file=sys.stderr)
        return 2
    from xce.worker.containment import ContainmentError, detect

    try:
        box = detect(name, kind=containment, parent=cgroup_parent, freeze=freeze)
    except ContainmentError as exc:
        print(f"xce worker: {exc}", file=sys.stderr)
        return 2
    log.warning("worker %s contains its jobs with %s", name, box.describe())
    agent = Agent(url, token, name=name, slots=slots, job_state=sd / "workers" / name / "jobs", work_dir=work_dir,
                  report_interval=report_interval, run_as_self=run_as_self, allow_root_jobs=allow_root_jobs,
                  stop_jobs_on_exit=stop_jobs_on_exit, ca_file=statedir.ca_file(sd), box=box, pids_max=pids_max,
                  task_port=task_port, spool_dir=Path(spool_dir) if spool_dir else default_spool(sd, name, run_as_self),
                  features=features, model=model, host_type=host_type, fake_gpus=fake)

    def stop(*_: Any) -> None:
        agent.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return agent.run()

