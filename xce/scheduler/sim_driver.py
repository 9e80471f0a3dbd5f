"""Simulation mode (Req 10 AC 11-14): the same core, fed from a replay file on a virtual clock.

The driver restores the newest SNAPSHOT at or before ``start_ts`` into a fresh core and pushes
every event after it in file order. At speed 0 the clock jumps to each event's ts (discrete);
at speed N it runs N times faster than the wall clock and the driver, never the core, sleeps
until the virtual time of the next event. Decisions go to the driver, which counts them,
remembers each job's last pend reasons (for the pause prompt) and, with ``verify``, compares them
with the recorded ones.

At speed 0, runs of consecutive usage ticks are coalesced before they reach the core
(:mod:`xce.scheduler.coalesce`: a tick that a later one of the same job makes redundant is read
but not pushed); ``coalesce=False`` pushes every one.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from typing import IO, Any

from xce.core import SchedulerCore
from xce.core.decisions import Decision, Dispatch, Pend
from xce.core.events import BeginRound, JobRusage
from xce.core.gcpause import collector_paused
from xce.core.snapshot import SnapshotError
from xce.replay import format as fmt
from xce.replay.reader import EVENT, Record, ReplayFileError, ReplayReader
from xce.replay.verify import Verifier, describe
from xce.scheduler.coalesce import coalesce as coalesce_usage


class SimDriver:
    def __init__(self, path: str | os.PathLike, *, start_ts: int | None = None, speed: int = 0,
                 pause_at: int | None = None, verify: bool = False, alt_events: str | os.PathLike | None = None,
                 seed: int = 0, out: IO[str] | None = None, err: IO[str] | None = None,
                 interactive: bool | None = None, keep_decisions: bool = False, max_report: int = 200,
                 coalesce: bool = True) -> None:
        if speed < 0:
            raise ValueError(f"speed must be >= 0 (0 = as fast as possible), got {speed}")
        self.path = os.fspath(path)
        self.start_ts = start_ts
        self.speed = speed
        self.pause_at = pause_at
        self.alt_events = os.fspath(alt_events) if alt_events is not None else None
        self.out = out if out is not None else sys.stdout  # looked up now: tests and CLIs swap it
        self.err = err if err is not None else sys.stderr
        self.interactive = interactive
        self.max_report = max_report
        self.verifier = Verifier() if verify else None
        self.decisions: list[Decision] | None = [] if keep_decisions else None
        self.by_op: Counter[str] = Counter()
        self.last_pend: dict[int, Pend] = {}
        self.core = SchedulerCore(self._on_decision, seed=seed)
        self.coalesce = coalesce and not speed
        self.events = 0
        self.coalesced = 0
        self.rounds = 0
        self.snapshot_ts: int | None = None
        self.snapshot_line: int | None = None
        self.paused_at: int | None = None
        self.pause_file: str | None = None
        self.stopped = False
        self.warnings: list[str] = []
        self.wall_s = 0.0
        self.exit_code = 0
        self._mismatches: list = []

    # -- decisions -----------------------------------------------------------------------
    def _on_decision(self, d: Decision) -> None:
        self.by_op[d.OP] += 1
        if type(d) is Pend:
            self.last_pend[d.jobid] = d
        elif type(d) is Dispatch:
            self.last_pend.pop(d.jobid, None)
        if self.verifier is not None:
            self.verifier.add_produced(d)
        if self.decisions is not None:
            self.decisions.append(d)

    # -- the run -------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Replay the file. The cyclic collector waits until the end (``xce.core.gcpause``): a replay
        builds a heap that only grows (jobs, the decisions kept for verification) and makes almost
        no reference cycles, so each of its full collections walked that heap again for nothing:
        1.2 s of a 14 s replay of a million events, against a few hundred objects collected."""
        t0 = time.perf_counter()
        base = ReplayReader(self.path)
        try:
            with collector_paused():
                if self.alt_events is None:
                    self._replay_base(base)
                else:
                    self._replay_alt(base)
        finally:
            self.wall_s = time.perf_counter() - t0
            self.warnings = list(base.warnings)
        return self.summary()

    def _choose(self, rec: Record, candidate: Record | None) -> bool:
        """Is ``rec`` (a SNAPSHOT) a better starting point than ``candidate``?"""
        return candidate is None or (self.start_ts is not None and rec.ts <= self.start_ts)

    def _starts(self, rec: Record) -> bool:
        """Once an event lies after start_ts, no later snapshot can qualify (ts never decreases)."""
        return self.start_ts is None or (rec.kind == EVENT and rec.ts > self.start_ts)

    def _replay_base(self, reader: ReplayReader) -> None:
        candidate: Record | None = None
        buffered: list[Record] = []
        records = iter(reader)
        for rec in records:
            if rec.kind == fmt.SNAPSHOT:
                if self._choose(rec, candidate):
                    candidate, buffered = rec, []
                continue
            if candidate is None:
                raise ReplayFileError(self.path, rec.lineno, f"{_kind(rec)} before the first SNAPSHOT: "
                                      "there is no state to start the replay from")
            if self._starts(rec):
                self._begin(candidate)
                if self._feed(buffered) and self._feed((rec,)):
                    self._feed(records)
                return
            buffered.append(rec)
        if candidate is None:
            raise ReplayFileError(self.path, max(reader.lines, 1), "no SNAPSHOT in the file: nothing to replay from")
        self._begin(candidate)
        self._feed(buffered)

    def _replay_alt(self, base: ReplayReader) -> None:
        """What-if: the state from the base file, the events from the alternative file."""
        candidate: Record | None = None
        recorded: list[Record] = []
        for rec in base:
            if rec.kind == fmt.SNAPSHOT:
                if self._choose(rec, candidate):
                    candidate, recorded = rec, []
            elif rec.kind == fmt.DECISION and candidate is not None:
                recorded.append(rec)
            elif self.verifier is None and candidate is not None and self._starts(rec):
                break  # the start snapshot is settled and recorded decisions are not needed
        if candidate is None:
            raise ReplayFileError(self.path, max(base.lines, 1), "no SNAPSHOT in the file: nothing to replay from")
        if self.verifier is not None:
            for rec in recorded:
                self.verifier.add_recorded(rec.ts, rec.item)
        self._begin(candidate)
        alt = ReplayReader(self.alt_events, require_header=False)  # type: ignore[arg-type]
        try:
            # Events up to the snapshot are already in its state; recorded decisions are not inputs.
            self._feed((rec for rec in alt if rec.kind == EVENT and rec.ts > candidate.ts), verify_recorded=False,
                       source=self.alt_events)
        finally:
            base.warnings.extend(alt.warnings)

    def _begin(self, snap: Record) -> None:
        try:
            self.core.restore(snap.item)
        except SnapshotError as exc:
            raise ReplayFileError(self.path, snap.lineno, f"SNAPSHOT cannot be loaded: {exc}") from None
        self.snapshot_ts = snap.ts
        self.snapshot_line = snap.lineno
        if self.start_ts is not None and snap.ts > self.start_ts:
            self.err.write(f"note: the recording starts at ts={snap.ts} ({fmt.iso_ns(snap.ts)}), after the "
                           f"requested start {self.start_ts}; replaying from its first snapshot\n")
        if self.speed:
            self.core.clock.set(snap.ts, None, self.speed, 1)

    def _feed(self, records, verify_recorded: bool = True, source: str | None = None) -> bool:
        """Push the events of ``records`` (recorded decisions go to the verifier; snapshots after the
        start are skipped). False when the replay stopped at a pause."""
        core = self.core
        freeze = core.clock.freeze_at
        verifier = self.verifier if verify_recorded else None
        coalesce = self.coalesce
        run: list[Record] = []
        clock_ts = -1
        for rec in records:
            kind = rec.kind
            if kind != EVENT:
                if kind == fmt.DECISION and verifier is not None:
                    verifier.add_recorded(rec.ts, rec.item)
                continue
            event = rec.item
            ts = rec.ts
            pausing = self.pause_at is not None and self.paused_at is None and ts > self.pause_at
            if coalesce and type(event) is JobRusage and not pausing:
                run.append(rec)
                continue
            if run:
                clock_ts = self._push_run(run, clock_ts, source)
                run = []
            if pausing and not self._pause(ts):
                self.stopped = True
                return False
            if self.speed:
                self._wait_until(ts)
            elif ts != clock_ts:
                freeze(ts)
                clock_ts = ts
            self._push(rec, source)
            self.events += 1
            if type(event) is BeginRound:
                self.rounds += 1
        if run:
            self._push_run(run, clock_ts, source)
        return True

    def _push(self, rec: Record, source: str | None) -> None:
        try:
            self.core.push_event(rec.item)
        except Exception as exc:  # noqa: BLE001 - a file's event the core cannot take: say which line
            raise self._refused(rec, source, exc) from None

    def _refused(self, rec: Record, source: str | None, exc: Exception) -> ReplayFileError:
        return ReplayFileError(source or self.path, rec.lineno, f"{rec.item.TYPE} refused by the core: "
                                                                f"{type(exc).__name__}: {exc}")

    def _push_run(self, run: list[Record], clock_ts: int, source: str | None) -> int:
        kept = coalesce_usage(self.core, [r.item for r in run])
        self.events += len(run)
        self.coalesced += len(run) - len(kept)
        if len(kept) != len(run):  # the records of the ticks kept, in order
            ids = {id(event) for event in kept}
            run = [r for r in run if id(r.item) in ids]
        freeze = self.core.clock.freeze_at
        push = self.core.push_event
        for rec in run:
            ts = rec.ts
            if ts != clock_ts:
                freeze(ts)
                clock_ts = ts
            try:
                push(rec.item)
            except Exception as exc:  # noqa: BLE001 - as in ``_push``
                raise self._refused(rec, source, exc) from None
        return clock_ts

    def _wait_until(self, ts: int) -> None:
        clock = self.core.clock
        while True:
            ahead = ts - clock.now()
            if ahead <= 0:
                return
            time.sleep(min(ahead / self.speed / 1e9, 1.0))

    # -- pausing -------------------------------------------------------------------------
    def _pause(self, next_ts: int) -> bool:
        """Returns whether to go on. Without a terminal, leave the state behind and stop."""
        assert self.pause_at is not None
        self.paused_at = self.pause_at
        if not self.speed:
            self.core.clock.freeze_at(max(self.pause_at, self.core.now()))
        interactive = self.interactive if self.interactive is not None else sys.stdin.isatty()
        self.out.write(self.state_text(next_ts))
        if not interactive:
            self.pause_file = f"{self.path}.pause-{self.pause_at}.json"
            with open(self.pause_file, "w", encoding="utf-8") as fp:
                self.core.save_snapshot(fp)
            self.out.write(f"snapshot written to {self.pause_file}\n")
            return False
        return self._prompt()

    def _prompt(self) -> bool:
        while True:
            self.out.write("sim> ")
            self.out.flush()
            line = sys.stdin.readline()
            if not line:
                return False
            words = line.split()
            if not words:
                continue
            cmd = words[0]
            if cmd == "state":
                self.out.write(self.state_text(None))
            elif cmd == "pending":
                self.out.write(self.pending_text())
            elif cmd == "snapshot" and len(words) == 2:
                with open(words[1], "w", encoding="utf-8") as fp:
                    self.core.save_snapshot(fp)
                self.out.write(f"snapshot written to {words[1]}\n")
            elif cmd in ("continue", "c"):
                return True
            elif cmd in ("quit", "q"):
                return False
            else:
                self.out.write("commands: state | pending | snapshot FILE | continue | quit\n")

    def state_text(self, next_ts: int | None) -> str:
        core = self.core
        now = core.now()
        lines = [f"paused at ts={now} ({fmt.iso_ns(now)})"
                 + (f"; next event at ts={next_ts} ({fmt.iso_ns(next_ts)})" if next_ts is not None else "")]
        states = Counter(j.state for j in core.jobs.values())
        lines.append(f"jobs: {states.get('RUN', 0)} running, {states.get('PEND', 0)} pending, "
                     f"{sum(n for s, n in states.items() if s not in ('RUN', 'PEND'))} other")
        lines.append("queues:")
        for q in core.queues.values():
            lines.append(f"  {q.name:<16} priority {q.priority:>4}  pending {q.pending:>6}  running {q.running:>6}")
        hosts = core.cluster.hosts
        lines.append(f"hosts: {len(hosts)} ({sum(1 for h in hosts if h.status == 'ok')} ok)")
        if hosts:
            free = core.cluster.available("slots")
            total = core.cluster.total("slots")
            jobs_on = Counter(i for on in core.cluster.held.values() for i in on)
            for i, h in enumerate(hosts):
                lines.append(f"  {h.name:<16} {h.status:<8} slots {int(total[i]) - int(free[i])}/{int(total[i])} used"
                             f"  jobs {jobs_on[i]}")
        return "\n".join(lines) + "\n"

    def pending_text(self) -> str:
        lines = []
        for job in self.core.jobs.values():
            if job.state != "PEND":
                continue
            pend = self.last_pend.get(job.jobid)
            why = describe(pend.to_json()) if pend is not None else "no round has looked at it yet"
            lines.append(f"job {job.jobid} ({job.queue}, priority {job.priority}): {why}")
        return "\n".join(lines) + "\n" if lines else "no pending jobs\n"

    # -- results -------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        s: dict[str, Any] = {
            "file": self.path, "alt_events": self.alt_events, "snapshot_ts": self.snapshot_ts,
            "snapshot_line": self.snapshot_line, "events": self.events, "rounds": self.rounds,
            "usage_coalesced": self.coalesced,
            "decisions": dict(sorted(self.by_op.items())), "wall_s": round(self.wall_s, 6),
            "events_per_s": round(self.events / self.wall_s, 1) if self.wall_s > 0 else None,
            "paused_at": self.paused_at, "pause_snapshot": self.pause_file, "stopped": self.stopped,
            "warnings": self.warnings,
        }
        if self.verifier is not None:
            mism = self._mismatches = self.verifier.mismatches()
            s["verify"] = {"recorded": self.verifier.n_recorded, "produced": self.verifier.n_produced,
                           "rounds": self.rounds, "mismatches": len(mism),
                           "details": [m.to_json() for m in mism[: self.max_report]],
                           "outcome_changes": self.verifier.outcome_changes() if mism else []}
            self.exit_code = 1 if mism else 0
        return s

    def report(self, summary: dict[str, Any], as_json: bool = False) -> None:
        for w in summary["warnings"]:
            self.err.write(w + "\n")
        if as_json:
            self.out.write(json.dumps(summary, sort_keys=True) + "\n")
            return
        w = self.out.write
        v = summary.get("verify")
        if v is not None:
            for m in self._mismatches[: self.max_report]:
                w(m.text() + "\n")
            if v["mismatches"] > self.max_report:
                w(f"... and {v['mismatches'] - self.max_report} more mismatches\n")
            if v["outcome_changes"]:
                w("outcome changes" + (" (what-if)" if self.alt_events else "") + ":\n")
                for line in v["outcome_changes"]:
                    w(f"  {line}\n")
            w(f"verified {v['produced']} decisions in {v['rounds']} rounds: {v['mismatches']} mismatches\n")
        start = summary["snapshot_ts"]
        w(f"replayed {summary['events']} events in {summary['rounds']} rounds from "
          f"{summary['alt_events'] or summary['file']} (snapshot at ts={start}"
          f"{f' ({fmt.iso_ns(start)})' if start is not None else ''}, line {summary['snapshot_line']})\n")
        ops = ", ".join(f"{op} {n}" for op, n in summary["decisions"].items()) or "none"
        w(f"decisions: {ops}\n")
        w(f"wall time {summary['wall_s']:.3f} s, {summary['events_per_s'] or 0:,.0f} events/s\n")


def _kind(rec: Record) -> str:
    return rec.item.TYPE if rec.kind == EVENT else rec.kind
