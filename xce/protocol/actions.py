"""The actions a controller queues for a worker: one frozen class per kind, one encoding.

An action travels as a JSON object (``{"kind": ..., "jobid": ..., ...}``) in the worker's poll
answer, where the delivery adds ``id`` and ``created`` (and ``host`` for a process serving many
hosts); :func:`decode` reads the fields of the action's class and nothing else. It is strict, so a
controller and a worker that disagree find out at the first action, not when a job misbehaves: an
unknown kind, a missing required field or a field of the wrong type is a :class:`ProtocolError`
naming the kind and the field. A field with a default may be left out (it means what the worker has
always taken its absence to mean); :func:`encode` always writes every field.

The field names are the ones workers have always read, and a start's fields are nested under
``"job"`` as they always were.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["ENFORCED_LIMITS", "KINDS", "Action", "AttachKey", "KillJob", "ProtocolError", "ResumeJob", "SetRunLimit", "SignalJob",
           "StartJob", "SuspendJob", "decode", "encode"]


#: The ``--limit`` names (``StartJob.limits``) every worker holds a job to by itself: through its control group (``mem``,
#: ``xce.io/cpu-milli``, ``pids``) and by which GPUs it lets the job see (``xce.io/gpu``). Any other
#: limit needs a resource provider that enforces it (``ResourceProvider.enforces_limits``); the
#: controller refuses the rest at submission rather than show a cap nobody keeps.
ENFORCED_LIMITS = frozenset({"mem", "xce.io/cpu-milli", "pids", "xce.io/gpu"})


class ProtocolError(ValueError):
    """An action that does not say what its kind needs: refused as a whole, never half carried out."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """Every action is about one run of one job (the ``actions`` table's ``jobid`` column).

    ``run`` is the run's identity, its dispatch time in ns (the job's ``start_time``): a requeued job
    runs again under its id, so a worker matches an action by (job, run), and an action for a run
    that has ended there, or that it does not hold, never touches another run of the same job. A
    start delivered again for a run the host already had starts nothing. None: any run (an action
    from a controller that predates runs, or about the job whatever runs of it)."""

    kind: ClassVar[str] = ""
    #: The key the fields are nested under on the wire, when they are.
    nested: ClassVar[str | None] = None
    jobid: int
    run: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class StartJob(Action):
    """Everything a host needs to run its part of a job, so its worker never asks the controller
    again: the first host of ``placement`` runs ``command``, every other one holds the job's
    container for the tasks ``xce launch`` starts there. ``stdout`` and ``stderr`` are final paths
    (every ``%`` code of :mod:`xce.jobfiles` expanded by the controller, for the host and ranks of
    this run; a ``%`` left in one is part of the name, so nothing expands them again): relative
    ones are to ``cwd``, and none given means the worker's own default file name."""

    kind: ClassVar[str] = "start"
    nested: ClassVar[str | None] = "job"
    user: str  # whose identity the job runs as
    command: list[str]
    #: The job's spooled script (``xce submit`` of a script file), written on the host and run by
    #: its ``#!`` line with ``command[1:]`` as arguments.
    script: str | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)  # the submitter's environment
    stdout: str | None = None
    stderr: str | None = None
    tasks: int = 1
    #: ``[host, tasks]`` per host, the first host first: the job's task layout and its host
    #: environment variables (``LSB_HOSTS``, ``SLURM_NODELIST``...). Empty: all on this host.
    placement: list[tuple[str, int]] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)  # per task: the devices (xce.io/gpu) it holds
    #: Per host, on top of ``requests`` (``rusage[xce.io/gpu=N/host]``: ``--gres=gpu:N``, ``-gpu num=N``).
    host_requests: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)  # the kernel and provider limits of its container
    run_limit: int | None = None  # seconds, enforced by the worker (none: no limit)
    process_limit: int | None = None  # its queue's cap on processes (pids.max)
    exclusive: bool = False  # then its processes see every slot of the host (SLURM_CPUS_ON_NODE)
    #: How it starts (interactive, open_mode, warn_signal, ...): the submission options it was given.
    options: dict[str, Any] = field(default_factory=dict)
    # What its environment says about it, as LSF and Slurm say it (xce.worker.jobvars):
    queue: str = ""
    project: str = ""
    name: str | None = None
    array_id: int | None = None
    array_index: int | None = None
    array: tuple[int, int, int] | None = None  # the array's lowest and highest index and its size
    env_families: list[str] = field(default_factory=lambda: ["lsf", "slurm"])
    #: What the job's ``xce launch`` proves to the task servers of its hosts to start tasks there.
    launch_key: str | None = None
    task_servers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class KillJob(Action):
    """End the job's processes on this host: ``signal``, then SIGKILL after ``grace_s``. The
    ``reason`` is what its end is reported with."""

    kind: ClassVar[str] = "kill"
    reason: str = "killed"
    signal: str = "SIGTERM"
    grace_s: float = 10.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SuspendJob(Action):
    """Stop the job's processes (preempted or suspended by a person); the worker reports it
    suspended with ``reason``. The scheduler's preemption may choose another ``signal``."""

    kind: ClassVar[str] = "suspend"
    signal: str = "SIGSTOP"
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ResumeJob(Action):
    """Let a suspended job's processes run again, with the signal that undoes its suspension."""

    kind: ClassVar[str] = "resume"
    signal: str = "SIGCONT"
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class SignalJob(Action):
    """``xce kill -s SIGNAL``: the signal goes to the job's processes and its state follows what
    they do with it, so the worker reports nothing of its own."""

    kind: ClassVar[str] = "signal"
    signal: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AttachKey(Action):
    """A key for one attach to an interactive job's terminal, which lives in the worker of its first
    host (:mod:`xce.worker.interactive`). ``run`` keeps a key for an earlier run of a requeued job
    from opening the terminal of a later one."""

    kind: ClassVar[str] = "attach"
    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SetRunLimit(Action):
    """``xce modify -W`` of a running job: the worker enforces its run limit (seconds from its
    start; 0: none) and keeps it over its own restart."""

    kind: ClassVar[str] = "run_limit"
    run_limit: int


#: Every kind a worker carries out, to its class.
KINDS: dict[str, type[Action]] = {cls.kind: cls for cls in (StartJob, KillJob, SuspendJob, ResumeJob, SignalJob,
                                                           AttachKey, SetRunLimit)}


class _Mismatch(Exception):
    """A value of another type than its field's: a :class:`ProtocolError` once the field is known."""


@dataclass(frozen=True, slots=True)
class _Field:
    """A field as the wire carries it, read by a function made once from its type: a worker decodes
    every action it gets, a fleet emulator thousands a second."""

    name: str
    type: Any
    required: bool
    read: Callable[[Any], Any]
    write: Callable[[Any], Any] | None  # a container's copy, a tuple as a list; None: written as it is


def encode(action: Action) -> dict[str, Any]:
    """The JSON object a worker receives (the ``actions`` table stores it as the row's payload)."""
    body = {}
    for f in _FIELDS[type(action)]:
        value = getattr(action, f.name)
        body[f.name] = value if f.write is None else f.write(value)
    if action.nested:
        return {"kind": action.kind, "jobid": action.jobid, action.nested: body}
    return {"kind": action.kind, **body}


def decode(message: dict[str, Any]) -> Action:
    """The action ``message`` describes; :class:`ProtocolError` when it describes none exactly."""
    if not isinstance(message, dict):
        raise ProtocolError(f"an action is a JSON object, not {_shown(message)}")
    kind = message.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown action kind {kind!r} (known: {', '.join(sorted(KINDS))})")
    body: Any = message
    if cls.nested:
        body = message.get(cls.nested)
        if not isinstance(body, dict):
            raise ProtocolError(f"{kind} action: field {cls.nested!r} must be an object, not {_shown(body)}")
    values = {}
    for f in _FIELDS[cls]:
        if f.name in body:
            try:
                values[f.name] = f.read(body[f.name])
            except _Mismatch:
                raise ProtocolError(f"{kind} action: field {f.name!r} must be {_describe(f.type)}, "
                                    f"not {_shown(body[f.name])}") from None
        elif f.required:
            raise ProtocolError(f"{kind} action: missing field {f.name!r}")
    if cls.nested and "jobid" in message and message["jobid"] != values["jobid"]:
        raise ProtocolError(f"{kind} action: field 'jobid' is {message['jobid']!r} outside {cls.nested!r} "
                            f"and {values['jobid']!r} inside")
    return cls(**values)


def _reader(tp: Any) -> Callable[[Any], Any]:
    """What reads a JSON value of type ``tp`` (a pair as a tuple, an integer as a float where a
    float is due), raising :class:`_Mismatch` for any other."""
    if tp is Any:
        return _same
    if tp in _SCALARS:
        return _SCALARS[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union) and len(args) == 2 and type(None) in args:
        inner = _reader(next(a for a in args if a is not type(None)))
        return lambda v: None if v is None else inner(v)
    if origin is list:
        item = _reader(args[0])

        def read_list(v: Any) -> list[Any]:
            if not isinstance(v, (list, tuple)):
                raise _Mismatch
            return [item(x) for x in v]
        return read_list
    if origin is tuple:
        items = [_reader(a) for a in args]

        def read_tuple(v: Any) -> tuple[Any, ...]:
            if not isinstance(v, (list, tuple)) or len(v) != len(items):
                raise _Mismatch
            return tuple(read(x) for read, x in zip(items, v, strict=True))
        return read_tuple
    if origin is dict and args[0] is str:
        value = _reader(args[1])

        def read_dict(v: Any) -> dict[str, Any]:
            if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                raise _Mismatch
            return {k: value(x) for k, x in v.items()}
        return read_dict
    raise TypeError(f"no wire form for {tp!r}")  # a class above declares a type this module cannot read


def _same(v: Any) -> Any:
    return v


def _scalar(*types_: type, exclude: type | None = None, convert: Callable[[Any], Any] = _same) -> Callable[[Any], Any]:
    def read(v: Any) -> Any:
        if not isinstance(v, types_) or (exclude is not None and isinstance(v, exclude)):
            raise _Mismatch
        return convert(v)
    return read


#: JSON has one number type: a bool is not a number here, an integer is a float where one is due.
_SCALARS = {str: _scalar(str), bool: _scalar(bool), int: _scalar(int, exclude=bool),
            float: _scalar(int, float, exclude=bool, convert=float)}


def _writer(tp: Any) -> Callable[[Any], Any] | None:
    """What copies a value of type ``tp`` into JSON's shapes, so the encoding shares nothing with the
    frozen action; None for a value written as it is."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return _plain
    if origin in (types.UnionType, typing.Union):
        inner = _writer(next(a for a in args if a is not type(None)))
        return None if inner is None else lambda v: None if v is None else inner(v)
    if origin in (list, tuple):
        return list if all(_writer(a) is None for a in args) else _plain
    if origin is dict:
        return dict if _writer(args[1]) is None else _plain
    return None


def _fields(cls: type[Action]) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    return tuple(_Field(f.name, hints[f.name],
                        f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                        _reader(hints[f.name]), _writer(hints[f.name])) for f in dataclasses.fields(cls))


def _describe(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_describe(a) for a in args)
    if origin is list:
        return f"a list of {_describe(args[0])}"
    if origin is tuple:
        return f"[{', '.join(_describe(a) for a in args)}]"
    if origin is dict:
        return f"an object of {_describe(args[1])}"
    return {type(None): "null", bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            Any: "any value"}[tp]


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _plain(value: Any) -> Any:
    """JSON's shapes: a tuple is a list, containers are copies (the action stays as it was)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


_FIELDS = {cls: _fields(cls) for cls in KINDS.values()}
