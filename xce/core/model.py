"""The core's mutable view of jobs, queues, projects and hosts.

These objects are built from the immutable specs that arrive in events and carry the
scheduling state the core derives (placement, charges, preemption bookkeeping).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from sys import intern
from types import MappingProxyType
from typing import Any, Mapping

from xce.core.specs import PEND, JobSpec, ProjectSpec, QueueSpec


@dataclass(slots=True)
class Account:
    """One job's charge for one resource on one host (resource-accounting.md).

    ``reserved`` and ``allocated`` come from the job's rusage at dispatch; ``used`` is the
    overage ``max(0, actual - reserved)`` so that ``reserved + used == max(reserved, actual)``.
    """

    reserved: int = 0
    allocated: int = 0
    used: int = 0

    @property
    def charged(self) -> int:
        return self.reserved + self.used


@dataclass(slots=True)
class Job:
    jobid: int
    user: str
    queue: str
    project: str
    job_type: str
    priority: int
    queue_time: int
    request_text: str
    tasks: int
    state: str = PEND
    request: Any = None  # xce.core.resreq.Request, or None when the text does not parse
    request_error: str = ""
    #: The fewest tasks any alternative of the request needs (cached: checked every round).
    min_tasks: int = 1
    placement: tuple[tuple[str, int], ...] = ()
    start_time: int = 0
    #: Run limit in seconds (0 = none): with ``start_time`` it says when a running job ends at the latest.
    run_limit: int = 0
    #: No other job on its hosts while it runs; ``claim`` is then the slots it is charged per host:
    #: every slot of each of its hosts, recorded at dispatch (see ``xce.core.alloc.allocator``).
    exclusive: bool = False
    claim: tuple[tuple[str, int], ...] = ()
    #: (host, resource) -> Account for every non-slot resource charged to this job.
    accounts: dict[tuple[str, str], Account] = field(default_factory=dict)
    slots_charged: bool = False
    real_charged: bool = False
    shared_charged: dict[str, int] = field(default_factory=dict)
    #: Preemption bookkeeping: the victims this job is waiting for, and for a victim, who took it.
    waiting_for: tuple[int, ...] = ()
    preempted_by: int | None = None
    resume_sent: bool = False
    last_usage: dict[str, int] = field(default_factory=dict)
    #: The reasons of the last PEND emitted for this job: an unchanged reason is not emitted again.
    last_pend: Any = None
    #: The cluster's release epoch when this job last failed to fit (see ``Cluster.release_epoch``).
    failed_epoch: int = -1
    #: The unsatisfiable cache's key, built once (``SchedulerCore._cache_key``); None: to be built.
    cache_key: Any = None
    #: (the cluster's host index, ``placement``, its host indexes, its tasks; both int64 arrays),
    #: recorded at dispatch: the ledger's release needs no name lookup per host while the first two
    #: are still the same objects.
    hosts_at: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_spec(cls, spec: JobSpec) -> "Job":
        # Interned: the many jobs of one user, queue or project share one string, and the cache
        # key compares them by identity first.
        return cls(jobid=spec.jobid, user=intern(spec.user), queue=intern(spec.queue),
                   project=intern(spec.project),
                   job_type=spec.job_type, priority=spec.priority, queue_time=spec.queue_time,
                   request_text=spec.request, tasks=spec.tasks, state=spec.state,
                   placement=spec.placement, start_time=spec.start_time, run_limit=spec.run_limit,
                   exclusive=spec.exclusive)

    def spec(self) -> JobSpec:
        return JobSpec(jobid=self.jobid, user=self.user, queue=self.queue, project=self.project,
                       job_type=self.job_type, priority=self.priority, queue_time=self.queue_time,
                       request=self.request_text, tasks=self.tasks, state=self.state,
                       placement=self.placement, start_time=self.start_time, run_limit=self.run_limit,
                       exclusive=self.exclusive)

    def held(self) -> tuple[tuple[str, int], ...]:
        """The slots this job holds per host while it runs: its tasks, or for an exclusive job
        every slot of its hosts (``claim``)."""
        return self.claim or self.placement


@dataclass(slots=True)
class Queue:
    spec: QueueSpec
    #: Jobs of this queue holding slots (RUN, or resumed), in total and per user: for MAX_RUNNING.
    running: int = 0
    running_by_user: dict[str, int] = field(default_factory=dict)
    #: Jobs of this queue waiting in PEND: lets a suspended victim see whether a preemptor waits.
    pending: int = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def priority(self) -> int:
        return self.spec.priority

    def is_ready(self) -> bool:
        """A queue dispatches when it is open, active and under MAX_RUNNING."""
        s = self.spec
        if s.status != "open" or not s.active:
            return False
        return s.max_running is None or self.running < s.max_running

    def block_reason(self) -> str | None:
        """Why the queue dispatches nothing now, in the words ``xce jobs -l`` shows (None: it may)."""
        s = self.spec
        if s.status != "open":
            return f"queue {s.status}"
        if not s.active:
            return "queue inactive"
        if s.max_running is not None and self.running >= s.max_running:
            return f"queue limit: {self.running} of {s.max_running} running"
        return None

    def user_ready(self, user: str) -> bool:
        limit = self.spec.max_running_per_user
        return limit is None or self.running_by_user.get(user, 0) < limit


@dataclass(slots=True)
class Project:
    spec: ProjectSpec


@dataclass(slots=True)
class Host:
    name: str
    status: str = "ok"
    #: Static values reported once (slots, maxmem, ncpus, type, provider capacities).
    static: dict[str, Any] = field(default_factory=dict)
    #: Dynamic load indices as last reported (mem, swp, r1m, ...).
    dynamic: dict[str, Any] = field(default_factory=dict)
    #: The cluster's ``held`` (jobid -> host index -> tasks) and this host's index, set by the cluster.
    held: dict[int, dict[int, int]] = field(default_factory=dict, repr=False, compare=False)
    index: int = field(default=-1, repr=False, compare=False)

    @property
    def jobs(self) -> Mapping[int, int]:
        """jobid -> tasks for every job whose slots or resources are charged here (read-only).

        Read from the cluster's record per job: a job on thousands of hosts is recorded once at
        dispatch and forgotten once at release, not written to and popped from every host. Reading
        costs a look at every job so recorded, which only views and checks do."""
        i = self.index
        return MappingProxyType({jobid: on[i] for jobid, on in self.held.items() if i in on})

    def value(self, name: str) -> Any:
        v = self.dynamic.get(name)
        return self.static.get(name) if v is None else v

    @property
    def slots(self) -> int:
        v = self.static.get("slots")
        if v is None:
            v = self.static.get("ncpus", 0)
        return int(v or 0)
