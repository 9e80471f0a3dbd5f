"""The core's input: one frozen dataclass per event type of Req 10 AC 4.

Every event carries ``ts``, the driver-supplied logical time in integer nanoseconds, and has a
lossless JSON form that is exactly one line of the replay file:
``{"type": "JOBS_PUSH", "ts": 123, "payload": {...}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from xce.core.specs import HostSpec, JobSpec, QueueSpec, ResourceDef, SchedConfig


class EventFormatError(ValueError):
    """A JSON object that is not a valid event; the message says which field and why."""


@dataclass(frozen=True, slots=True)
class Event:
    TYPE: ClassVar[str] = ""
    ts: int

    def payload(self) -> dict[str, Any]:
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TYPE, "ts": self.ts, "payload": self.payload()}

    @classmethod
    def _from_payload(cls, ts: int, p: dict[str, Any]) -> "Event":
        return cls(ts=ts)


@dataclass(frozen=True, slots=True)
class ConfigPush(Event):
    TYPE: ClassVar[str] = "CONFIG_PUSH"
    config: SchedConfig = field(default_factory=SchedConfig)

    def payload(self):
        return self.config.to_json()

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, config=SchedConfig.from_json(p))


@dataclass(frozen=True, slots=True)
class JobsPush(Event):
    TYPE: ClassVar[str] = "JOBS_PUSH"
    jobs: tuple[JobSpec, ...] = ()

    def payload(self):
        return {"njobs": len(self.jobs), "jobs": [j.to_json() for j in self.jobs]}

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, jobs=tuple(JobSpec.from_json(j) for j in p["jobs"]))


@dataclass(frozen=True, slots=True)
class WorkersPush(Event):
    """Hosts added or changed (upsert); ``status`` other than ``ok`` takes a host out of placement."""

    TYPE: ClassVar[str] = "WORKERS_PUSH"
    hosts: tuple[HostSpec, ...] = ()

    def payload(self):
        return {"nworkers": len(self.hosts), "workers": [h.to_json() for h in self.hosts]}

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, hosts=tuple(HostSpec.from_json(h) for h in p["workers"]))


@dataclass(frozen=True, slots=True)
class ResourcesPush(Event):
    TYPE: ClassVar[str] = "RESOURCES_PUSH"
    resources: tuple[ResourceDef, ...] = ()

    def payload(self):
        return {"n": len(self.resources), "resources": [r.to_json() for r in self.resources]}

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, resources=tuple(ResourceDef.from_json(r) for r in p["resources"]))


def _sorted_values(values: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {h: dict(sorted(v.items())) for h, v in sorted(values.items())}


@dataclass(frozen=True, slots=True)
class ResvalsFull(Event):
    """Each listed host's dynamic values, replacing what it reported before (in-use is untouched)."""

    TYPE: ClassVar[str] = "RESVALS_FULL"
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def payload(self):
        return {"values": _sorted_values(self.values)}

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, values={h: dict(v) for h, v in p["values"].items()})


@dataclass(frozen=True, slots=True)
class ResvalsDelta(Event):
    """Changed dynamic values only, merged into each host's values (in-use is untouched)."""

    TYPE: ClassVar[str] = "RESVALS_DELTA"
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def payload(self):
        return {"values": _sorted_values(self.values)}

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, values={h: dict(v) for h, v in p["values"].items()})


@dataclass(frozen=True, slots=True)
class JobStateChange(Event):
    TYPE: ClassVar[str] = "JOB_STATE_CHANGE"
    jobid: int = 0
    state: str = ""
    reason: str = ""

    def payload(self):
        return {"jobid": self.jobid, "state": self.state, "reason": self.reason}

    @classmethod
    def _from_payload(cls, ts, p):
        # What ``cls(ts=..., jobid=..., state=..., reason=...)`` builds, without the frozen
        # dataclass's ``__init__`` (see ``_SET``): a replay reads one per job start and end.
        obj = _new(cls)
        _SET["JobStateChange"](obj, ts, int(p["jobid"]), str(p["state"]), str(p.get("reason", "")))
        return obj


@dataclass(frozen=True, slots=True)
class JobUpdate(Event):
    """Fields changed on a job (``None`` = unchanged): priority, queue, project, request, tasks and
    run limit (seconds, 0 for none: a running job's, changed by ``xce modify -W``).

    ``request``, ``tasks`` and ``run_limit`` go into the payload only when set, so recordings made
    before they existed read and write back byte for byte.
    """

    TYPE: ClassVar[str] = "JOB_UPDATE"
    jobid: int = 0
    priority: int | None = None
    queue: str | None = None
    project: str | None = None
    request: str | None = None
    tasks: int | None = None
    run_limit: int | None = None

    def payload(self):
        out = {"jobid": self.jobid, "priority": self.priority, "queue": self.queue, "project": self.project}
        if self.request is not None:
            out["request"] = self.request
        if self.tasks is not None:
            out["tasks"] = self.tasks
        if self.run_limit is not None:
            out["run_limit"] = self.run_limit
        return out

    @classmethod
    def _from_payload(cls, ts, p):
        tasks, run_limit = p.get("tasks"), p.get("run_limit")
        return cls(ts=ts, jobid=int(p["jobid"]), priority=p.get("priority"), queue=p.get("queue"),
                   project=p.get("project"), request=p.get("request"),
                   tasks=None if tasks is None else int(tasks), run_limit=None if run_limit is None else int(run_limit))


@dataclass(frozen=True, slots=True)
class QueueUpdate(Event):
    TYPE: ClassVar[str] = "QUEUE_UPDATE"
    queue: QueueSpec = field(default_factory=lambda: QueueSpec(name="normal"))

    def payload(self):
        return self.queue.to_json()

    @classmethod
    def _from_payload(cls, ts, p):
        return cls(ts=ts, queue=QueueSpec.from_json(p))


@dataclass(frozen=True, slots=True)
class JobRusage(Event):
    """One usage tick in the worker's own names (``memory_rss``, ``cpu_time``), verbatim."""

    TYPE: ClassVar[str] = "JOB_RUSAGE"
    jobid: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    def payload(self):
        return {"jobid": self.jobid, "usage": dict(sorted(self.usage.items()))}

    @classmethod
    def _from_payload(cls, ts, p):
        # ``cls(ts=..., jobid=..., usage=...)`` without the frozen ``__init__`` (see ``_SET``): the
        # most frequent line of a recording.
        obj = _new(cls)
        _SET["JobRusage"](obj, ts, int(p["jobid"]), dict(p["usage"]))
        return obj


@dataclass(frozen=True, slots=True)
class BeginRound(Event):
    TYPE: ClassVar[str] = "BEGIN_ROUND"


def _setter(cls: type, *names: str) -> Any:
    """``set(obj, *values)``: store ``values`` into the slots ``names`` of a new ``cls`` object.

    A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` by name;
    the slot descriptors themselves take about half the time, which matters for the events a
    replay reads a million times. ``names`` must be every field, so the object is complete.
    """
    assert names == tuple(f.name for f in fields(cls)), (cls, names)
    setters = tuple(getattr(cls, name).__set__ for name in names)
    if len(setters) == 3:
        a, b, c = setters

        def set3(obj: Any, x: Any, y: Any, z: Any) -> None:
            a(obj, x)
            b(obj, y)
            c(obj, z)
        return set3
    a, b, c, d = setters

    def set4(obj: Any, w: Any, x: Any, y: Any, z: Any) -> None:
        a(obj, w)
        b(obj, x)
        c(obj, y)
        d(obj, z)
    return set4


_new = object.__new__
_SET = {"JobRusage": _setter(JobRusage, "ts", "jobid", "usage"),
        "JobStateChange": _setter(JobStateChange, "ts", "jobid", "state", "reason")}

EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (ConfigPush, JobsPush, WorkersPush, ResourcesPush, ResvalsFull, ResvalsDelta,
                JobStateChange, JobUpdate, QueueUpdate, JobRusage, BeginRound)
}


def from_json(obj: dict[str, Any]) -> Event:
    """Rebuild an event from its JSON form; anything malformed raises ``EventFormatError``."""
    if not isinstance(obj, dict):
        raise EventFormatError(f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise EventFormatError(f"unknown event type {kind!r} (expected one of {', '.join(EVENT_TYPES)})")
    ts = obj.get("ts")
    if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
        raise EventFormatError(f"{kind}: 'ts' must be a non-negative integer of nanoseconds, got {ts!r}")
    return from_parts(cls, ts, obj.get("payload", {}))


def from_parts(cls: type[Event], ts: int, payload: Any) -> Event:
    """Build an event of a known class from a checked ``ts`` and its payload (the replay hot path)."""
    if not isinstance(payload, dict):
        raise EventFormatError(f"{cls.TYPE}: 'payload' must be an object")
    try:
        return cls._from_payload(ts, payload)
    except EventFormatError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise EventFormatError(f"{cls.TYPE}: bad payload: {exc}") from exc
