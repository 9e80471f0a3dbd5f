"""Plain records that cross the core boundary inside events.

They are what a driver knows about a job, a queue, a host or a resource: immutable, JSON-able
and free of scheduling state. The core builds its own mutable objects from them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

#: Job states, in LSF's vocabulary (SSUSP: suspended by the system, USUSP: by the user).
PEND, RUN, SSUSP, USUSP, DONE, EXIT = "PEND", "RUN", "SSUSP", "USUSP", "DONE", "EXIT"
#: LSF's UNKWN: the job ran on a host that stopped reporting; it keeps everything it held.
UNKWN = "UNKWN"
JOB_STATES = (PEND, RUN, SSUSP, USUSP, UNKWN, DONE, EXIT)
FINISHED = frozenset({DONE, EXIT})
SUSPENDED = frozenset({SSUSP, USUSP})


_FIELD_NAMES: dict[type, frozenset[str]] = {}


class _Record:
    """JSON round trip for the spec dataclasses: tuples become lists and back."""

    _tuple_fields: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_json(cls, obj: dict[str, Any]):
        known = _FIELD_NAMES.get(cls)
        if known is None:  # worked out once per class: a replay reads a job spec per submission
            known = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))  # type: ignore[arg-type]
        if not known.issuperset(obj):
            unknown = sorted(set(obj) - known)
            raise ValueError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}")
        kw = dict(obj)
        for name in cls._tuple_fields:
            if name in kw and kw[name] is not None:
                kw[name] = tuple(kw[name])
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class JobSpec(_Record):
    """A job as submitted. ``queue_time`` is set by the driver (ns), never by the core."""

    jobid: int
    user: str
    queue: str
    project: str = "default"
    job_type: str = ""
    priority: int = 0
    queue_time: int = 0
    request: str = ""
    tasks: int = 1
    state: str = PEND
    #: Where a job already runs (host, tasks): lets a restarted scheduler re-charge it.
    placement: tuple[tuple[str, int], ...] = ()
    start_time: int = 0
    #: The job's run limit in seconds (``xce submit -W``/``--time``, or its queue's default); 0 = none.
    run_limit: int = 0
    #: No other job on its hosts while it runs (``bsub -x``, ``sbatch --exclusive``); see
    #: ``xce.core.alloc.allocator`` for how it is placed and charged.
    exclusive: bool = False

    _tuple_fields: ClassVar[tuple[str, ...]] = ("placement",)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["placement"] = [[h, n] for h, n in self.placement]
        if not self.run_limit:
            del d["run_limit"]  # a job without one reads as it did before run limits existed
        if not self.exclusive:
            del d["exclusive"]  # likewise: every recording made before exclusive jobs reads the same
        return d

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "JobSpec":
        kw = dict(obj)
        kw["placement"] = tuple((str(h), int(n)) for h, n in kw.get("placement", ()))
        return _Record.from_json.__func__(cls, kw)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class QueueSpec(_Record):
    """A queue's scheduling policy (see ``xce.config.schema.QueueConfig`` for the meaning)."""

    _tuple_fields: ClassVar[tuple[str, ...]] = ("preemptible_queues",)

    name: str
    priority: int = 0
    status: str = "open"
    active: bool = True
    max_running: int | None = None
    max_running_per_user: int | None = None
    project_name: str | None = None
    job_pick_plugin: str | None = None
    preemptible_queues: tuple[str, ...] = ()
    preemptible: bool = True
    preempt_policy: str = "lowest_priority_first"
    preempt_signal: str = "SIGSTOP"
    #: Run limits in seconds: the default of a job that names none, and the most a job may ask for.
    run_limit: int | None = None
    max_run_limit: int | None = None
    #: Backfilling pickers: how many pending jobs one round tries (None = all), and how many
    #: blocked jobs get a reservation (1 = EASY; more approaches conservative backfilling).
    backfill_depth: int | None = None
    reservations: int = 1
    #: ``fairshare``: whose usage is compared ("user" or "project"), the configured shares as
    #: sorted (name, share) pairs (a name not listed has share 1), and the usage half-life (s).
    fairshare_by: str = "user"
    shares: tuple[tuple[str, int], ...] = ()
    fairshare_half_life: int = 7 * 24 * 3600

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "QueueSpec":
        kw = dict(obj)
        if "shares" in kw:
            kw["shares"] = tuple((str(n), int(v)) for n, v in kw["shares"])
        return _Record.from_json.__func__(cls, kw)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class ProjectSpec(_Record):
    name: str
    priority: int = 0


@dataclass(frozen=True, slots=True)
class ResourceDef(_Record):
    """A resource the cluster knows.

    ``real`` resources (mem) have an OS ground truth and follow the reservation-vs-actual policy;
    virtual ones (slots) are pure counts. ``shared`` resources live in one cluster-wide pool of
    ``total`` units (licenses).
    """

    name: str
    numeric: bool = True
    consumable: bool = False
    dynamic: bool = False
    real: bool = False
    shared: bool = False
    total: int | None = None


@dataclass(frozen=True, slots=True)
class HostSpec(_Record):
    """A worker's host: static values it reported once (``slots``, ``maxmem``, ``ncpus``, ``type``…)."""

    name: str
    status: str = "ok"
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SchedConfig(_Record):
    """What the scheduler needs of the cluster configuration."""

    _tuple_fields: ClassVar[tuple[str, ...]] = ("queues", "projects", "resources")

    job_pick_plugin: str = "builtin_fcfs"
    queues: tuple[QueueSpec, ...] = ()
    projects: tuple[ProjectSpec, ...] = ()
    resources: tuple[ResourceDef, ...] = ()
    resource_names: dict[str, str] = field(default_factory=lambda: {"memory_rss": "mem"})

    def to_json(self) -> dict[str, Any]:
        return {
            "job_pick_plugin": self.job_pick_plugin,
            "queues": [q.to_json() for q in self.queues],
            "projects": [p.to_json() for p in self.projects],
            "resources": [r.to_json() for r in self.resources],
            "resource_names": dict(sorted(self.resource_names.items())),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "SchedConfig":
        return cls(
            job_pick_plugin=obj.get("job_pick_plugin", "builtin_fcfs"),
            queues=tuple(QueueSpec.from_json(q) for q in obj.get("queues", ())),
            projects=tuple(ProjectSpec.from_json(p) for p in obj.get("projects", ())),
            resources=tuple(ResourceDef.from_json(r) for r in obj.get("resources", ())),
            resource_names=dict(obj.get("resource_names", {"memory_rss": "mem"})),
        )
