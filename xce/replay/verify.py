"""Comparing the decisions a replay produces with the ones recorded (Req 10 AC 13-14).

Decisions are compared by ``Decision.key()`` (everything but ts and seq) round by round: for each
logical time, the recorded list against the produced list. Within a round the lists are aligned
with a sequence matcher, so one extra decision shows up as one "extra" line rather than as every
later decision being "different". The same comparison, fed from a what-if event file, is the
what-if report; ``outcome_changes`` adds the per-job view a person asks for ("job 17 now starts
12 s earlier on other hosts").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from xce.core import decisions as dec
from xce.core.decisions import Decision
from xce.replay.format import iso_ns


def describe(payload: dict[str, Any]) -> str:
    """A decision in words: op, job and placement or reasons."""
    op = payload.get("op")
    if op == "DISPATCH":
        hosts = ", ".join(f"{h}x{n}" for h, n in payload.get("placement", ()))
        return f"DISPATCH job {payload.get('jobid')} on {hosts}"
    if op == "PEND":
        reasons = "; ".join(r.get("text", r.get("step", "")) for r in payload.get("reasons", ()))
        return f"PEND job {payload.get('jobid')}: {reasons}"
    if op == "PREEMPT":
        return (f"PREEMPT by job {payload.get('preempting_jobid')} of job(s) "
                f"{', '.join(map(str, payload.get('victim_jobids', ())))} ({payload.get('signal')})")
    if op == "RESUME":
        return f"RESUME job {payload.get('jobid')}"
    return str(payload)


@dataclass(slots=True)
class Mismatch:
    kind: str  # "missing" (recorded, not produced), "extra" (produced, not recorded), "different"
    ts: int
    recorded: dict[str, Any] | None
    produced: dict[str, Any] | None

    def text(self) -> str:
        where = f"ts={self.ts} ({iso_ns(self.ts)})"
        if self.kind == "missing":
            return f"MISSING at {where}: recorded {describe(self.recorded or {})}; not produced"
        if self.kind == "extra":
            return f"EXTRA at {where}: produced {describe(self.produced or {})}; not recorded"
        return (f"DIFFERENT at {where}: recorded {describe(self.recorded or {})}; "
                f"produced {describe(self.produced or {})}")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "ts": self.ts, "time": iso_ns(self.ts),
                "recorded": self.recorded, "produced": self.produced}


def _body(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "seq"}


def _key(body: dict[str, Any], ts: int) -> str:
    return dec.from_json(body, ts).key()


@dataclass
class Verifier:
    """Recorded and produced decisions, by logical time, as JSON bodies without ``seq``.

    A round whose two lists are equal as JSON (the usual case, and a cheap comparison) is not
    looked at again; only a round that differs is compared by ``Decision.key()``, which also
    forgives what ``from_json`` fills in (a missing default, an int written as a float).
    """

    recorded: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    produced: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def add_recorded(self, ts: int, payload: dict[str, Any]) -> None:
        dec.from_json(payload, ts)  # a malformed recorded decision is an error now, not a mismatch later
        self.recorded.setdefault(ts, []).append(_body(payload))

    def add_produced(self, d: Decision) -> None:
        body = d.to_json()
        del body["seq"]
        self.produced.setdefault(d.ts, []).append(body)

    @property
    def n_recorded(self) -> int:
        return sum(map(len, self.recorded.values()))

    @property
    def n_produced(self) -> int:
        return sum(map(len, self.produced.values()))

    def mismatches(self) -> list[Mismatch]:
        out: list[Mismatch] = []
        for ts in sorted(self.recorded.keys() | self.produced.keys()):
            rec = self.recorded.get(ts, [])
            got = self.produced.get(ts, [])
            if rec == got:
                continue
            rk = [_key(b, ts) for b in rec]
            gk = [_key(b, ts) for b in got]
            if rk == gk:
                continue
            for tag, i1, i2, j1, j2 in SequenceMatcher(None, rk, gk, autojunk=False).get_opcodes():
                if tag == "equal":
                    continue
                pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
                for n in range(pairs):
                    out.append(Mismatch("different", ts, rec[i1 + n], got[j1 + n]))
                for i in range(i1 + pairs, i2):
                    out.append(Mismatch("missing", ts, rec[i], None))
                for j in range(j1 + pairs, j2):
                    out.append(Mismatch("extra", ts, None, got[j]))
        return out

    def outcome_changes(self) -> list[str]:
        """Per job: where its first dispatch happened in the recording versus in this run."""
        rec = _first_dispatch(self.recorded)
        got = _first_dispatch(self.produced)
        lines = []
        for jobid in sorted(rec.keys() | got.keys()):
            a, b = rec.get(jobid), got.get(jobid)
            if a == b:
                continue
            if a is None:
                lines.append(f"job {jobid}: not dispatched in the recording; dispatched at {_at(b)}")
            elif b is None:
                lines.append(f"job {jobid}: dispatched at {_at(a)} in the recording; not dispatched in this run")
            else:
                delta = (b[0] - a[0]) / 1e9
                when = ("at the same time" if delta == 0 else
                        f"{abs(delta):.3f} s {'earlier' if delta < 0 else 'later'}")
                where = "on the same hosts" if a[1] == b[1] else "on other hosts"
                lines.append(f"job {jobid}: dispatched {when} {where}: recording {_at(a)}; this run {_at(b)}")
        return lines


def _first_dispatch(by_ts: dict[int, list[dict[str, Any]]]) -> dict[int, tuple[int, tuple]]:
    first: dict[int, tuple[int, tuple]] = {}
    for ts in sorted(by_ts):
        for body in by_ts[ts]:
            if body.get("op") == "DISPATCH" and body["jobid"] not in first:
                first[body["jobid"]] = (ts, tuple(tuple(p) for p in body["placement"]))
    return first


def _at(x: tuple[int, tuple] | None) -> str:
    assert x is not None
    ts, placement = x
    return f"ts={ts} ({iso_ns(ts)}) on {', '.join(f'{h}x{n}' for h, n in placement)}"
