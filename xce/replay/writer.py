"""Recording: what ``xceadmin scheduler record start`` does (Req 10 AC 9-10).

The writer sits on both sides of the core: the driver hands it each input event *before* pushing
it, and routes the core's decisions through it. It never touches the core except to read a
snapshot between rounds, so recording cannot change a decision.

Periodic snapshots are cut only at a time boundary (the next event's ts is later than the last
one's): then every event before a SNAPSHOT has ``ts <= snapshot.ts`` and every event after it has
``ts > snapshot.ts``, which is what makes "start at TS" and what-if event files unambiguous.

Lines are kept in memory until :meth:`ReplayWriter.flush` (the scheduler calls it at the end of
every round, before it posts the round's decisions) and then written whole, in one write: a
scheduler that crashes loses at most the round it was in, never a line half-written, and what is
on disk replays up to the cut.
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, Iterable

from xce.core import SchedulerCore
from xce.core.decisions import Decision
from xce.core.events import Event
from xce.replay import format as fmt

#: Characters held before they are written even within a round (a round of a huge backlog).
_HOLD_AT_MOST = 1 << 20


class ReplayWriter:
    def __init__(self, fp_or_path: str | os.PathLike | IO[str], core: SchedulerCore,
                 snapshot_interval: int = 0, *, start_ts: int | None = None) -> None:
        if snapshot_interval < 0:
            raise ValueError(f"snapshot_interval must be >= 0 (0 = initial snapshot only), got {snapshot_interval}")
        if isinstance(fp_or_path, (str, os.PathLike)):
            self._fp: IO[str] = open(fp_or_path, "w", encoding="utf-8")
            self._owns = True
        else:
            self._fp = fp_or_path
            self._owns = False
        self.core = core
        self._lines: list[str] = []
        self._held = 0
        self.snapshot_interval = snapshot_interval
        self.events = 0
        self.decisions = 0
        self.snapshots = 0
        self._since = 0
        # The clock's anchor is the ts of the last event the driver pushed (both drivers set it per
        # event), unlike now(), which in normal mode runs ahead of events still to be delivered.
        start = core.clock.params.virtual_base if start_ts is None else int(start_ts)
        self._last_ts = start
        self._write(fmt.header(core.config.to_json(), start))
        self._snapshot(start)
        self.flush()

    def _write(self, obj: dict[str, Any]) -> None:
        text = fmt.line(obj)
        self._lines.append(text)
        self._held += len(text)
        if self._held >= _HOLD_AT_MOST:
            self.flush()

    def flush(self) -> None:
        """Write the lines held so far, whole, and hand them to the operating system."""
        if self._lines:
            text, self._lines, self._held = "".join(self._lines), [], 0
            self._fp.write(text)
        self._fp.flush()

    def _snapshot(self, ts: int) -> None:
        self._write(fmt.snapshot(ts, self.core.snapshot()))
        self.snapshots += 1
        self._since = 0

    def event(self, e: Event) -> None:
        """Call before ``core.push_event(e)``: a due snapshot must show the state before ``e``."""
        if e.ts < self._last_ts:
            raise ValueError(f"event ts went backwards: {e.TYPE} at {e.ts} after {self._last_ts}")
        if self.snapshot_interval and self._since >= self.snapshot_interval and e.ts > self._last_ts:
            self._snapshot(self._last_ts)
        self._write(e.to_json())
        self._last_ts = e.ts
        self.events += 1
        self._since += 1

    def decision(self, d: Decision) -> None:
        self._write(fmt.decision(d.ts, d.to_json()))
        self.decisions += 1

    __call__ = decision

    def close(self) -> None:
        if self._fp.closed:
            return
        self.flush()
        if self._owns:
            self._fp.close()

    def __enter__(self) -> "ReplayWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def record(events: Iterable[Event], path: str | os.PathLike | IO[str], seed: int = 0,
           snapshot_interval: int = 0) -> list[Decision]:
    """Run a fresh core over ``events`` while recording; returns the decisions it made.

    The recording starts 1 ns before the first event so that the initial snapshot, like every
    other, precedes all events after it in time as well as in the file.
    """
    events = list(events)
    decisions: list[Decision] = []
    writer: ReplayWriter | None = None

    def sink(d: Decision) -> None:
        decisions.append(d)
        writer.decision(d)  # type: ignore[union-attr]

    core = SchedulerCore(sink, seed=seed)
    core.clock.freeze_at(max(events[0].ts - 1, 0) if events else 0)
    writer = ReplayWriter(path, core, snapshot_interval)
    try:
        for e in events:
            writer.event(e)
            core.clock.freeze_at(e.ts)
            core.push_event(e)
    finally:
        writer.close()
    return decisions


def record_to_string(events: Iterable[Event], seed: int = 0, snapshot_interval: int = 0) -> str:
    buf = io.StringIO()
    record(events, buf, seed=seed, snapshot_interval=snapshot_interval)
    return buf.getvalue()


__all__ = ["ReplayWriter", "record", "record_to_string"]
