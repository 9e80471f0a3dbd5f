"""The core's output. Each decision is stamped with the logical time of the round that made it
and a sequence number unique within the core, so drivers can make them idempotent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class PendReason:
    """Why a job waits: the step that refused, the resource, what was needed and how much was short.

    ``proven_by`` names the job whose failed allocation this session proved the request
    unsatisfiable, when the reason comes from the unsatisfiable cache.
    """

    step: str
    text: str
    resource: str = ""
    needed: int = 0
    short: int = 0
    proven_by: int | None = None

    def to_json(self) -> dict[str, Any]:
        d = {"step": self.step, "text": self.text, "resource": self.resource,
             "needed": self.needed, "short": self.short}
        if self.proven_by is not None:
            d["proven_by"] = self.proven_by
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "PendReason":
        return cls(step=d["step"], text=d["text"], resource=d.get("resource", ""),
                   needed=int(d.get("needed", 0)), short=int(d.get("short", 0)),
                   proven_by=d.get("proven_by"))


@dataclass(frozen=True, slots=True)
class Decision:
    OP: ClassVar[str] = ""
    ts: int
    seq: int

    def body(self) -> dict[str, Any]:
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"op": self.OP, "seq": self.seq, **self.body()}

    def key(self) -> str:
        """What a verifier compares: everything but the time stamp and sequence number."""
        return json.dumps({"op": self.OP, **self.body()}, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Dispatch(Decision):
    OP: ClassVar[str] = "DISPATCH"
    jobid: int = 0
    placement: tuple[tuple[str, int], ...] = ()

    def body(self):
        return {"jobid": self.jobid, "placement": [[h, n] for h, n in self.placement]}


@dataclass(frozen=True, slots=True)
class Pend(Decision):
    OP: ClassVar[str] = "PEND"
    jobid: int = 0
    reasons: tuple[PendReason, ...] = ()

    def body(self):
        return {"jobid": self.jobid, "reasons": [r.to_json() for r in self.reasons]}


@dataclass(frozen=True, slots=True)
class Preempt(Decision):
    OP: ClassVar[str] = "PREEMPT"
    preempting_jobid: int = 0
    victim_jobids: tuple[int, ...] = ()
    signal: str = "SIGSTOP"

    def body(self):
        return {"preempting_jobid": self.preempting_jobid, "victim_jobids": list(self.victim_jobids),
                "signal": self.signal}


@dataclass(frozen=True, slots=True)
class Resume(Decision):
    OP: ClassVar[str] = "RESUME"
    jobid: int = 0
    signal: str = "SIGCONT"

    def body(self):
        return {"jobid": self.jobid, "signal": self.signal}


DECISION_TYPES: dict[str, type[Decision]] = {c.OP: c for c in (Dispatch, Pend, Preempt, Resume)}


def from_json(d: dict[str, Any], ts: int) -> Decision:
    """Rebuild a decision from ``to_json()`` output plus the time stamp of its replay line."""
    op = d.get("op")
    seq = int(d.get("seq", 0))
    if op == "DISPATCH":
        return Dispatch(ts=ts, seq=seq, jobid=int(d["jobid"]),
                        placement=tuple((str(h), int(n)) for h, n in d["placement"]))
    if op == "PEND":
        return Pend(ts=ts, seq=seq, jobid=int(d["jobid"]),
                    reasons=tuple(PendReason.from_json(r) for r in d["reasons"]))
    if op == "PREEMPT":
        return Preempt(ts=ts, seq=seq, preempting_jobid=int(d["preempting_jobid"]),
                       victim_jobids=tuple(int(v) for v in d["victim_jobids"]), signal=d.get("signal", "SIGSTOP"))
    if op == "RESUME":
        return Resume(ts=ts, seq=seq, jobid=int(d["jobid"]), signal=d.get("signal", "SIGCONT"))
    raise ValueError(f"unknown decision op {op!r} (expected one of {', '.join(DECISION_TYPES)})")
