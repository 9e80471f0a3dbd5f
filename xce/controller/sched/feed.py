"""The scheduler's feed: the ordered event log, the full-state sync, and control commands.

Reading is by sequence number: ``after=S`` returns events with ``seq > S`` in order. Seqs are
strictly increasing and survive restarts (the counter resumes from the stored maximum), so a
scheduler that remembers the ``last_seq`` it processed resumes without loss or duplication after
its own restart or the controller's. Seqs are normally contiguous, but clients must not rely on
that (a rolled-back transaction can leave a hole); they rely only on the order.

Bounded size: the log keeps the newest ``event_retention`` events (default 200,000) and prunes
older ones every few seconds. A scheduler asking for events that were pruned, or for a seq beyond
the newest (the store was replaced), gets 410 Gone and must resync with :func:`full_state`, whose
``seq`` is the point to continue from.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import sqlalchemy as sa

from xce.controller.errors import Gone
from xce.controller.jobs.states import UNFINISHED
from xce.controller.sched import wire
from xce.controller.sched.wire import jobspec_json
from xce.controller.service import JOBS_PER_PUSH, Controller, dumps
from xce.controller.store.prepared import Prepared
from xce.controller.store.schema import control, decisions, events, jobs, submit_keys
from xce.core import events as ev

log = logging.getLogger("xce.controller")
_READ = Prepared(sa.select(events.c.seq, events.c.ts, events.c.type, events.c.payload)
                 .where(events.c.seq > sa.bindparam("after")).order_by(events.c.seq).limit(sa.bindparam("lim")))


def check_cursor(ctl: Controller, after: int) -> None:
    if after < ctl.first_seq - 1:
        raise Gone(f"events after seq {after} were pruned (the oldest kept is {ctl.first_seq}); "
                   f"resync with GET /v1/sched/state")
    if after > ctl.last_seq:
        raise Gone(f"seq {after} is beyond the newest event {ctl.last_seq}: this controller's log is not the one "
                   f"you read before; resync with GET /v1/sched/state")


def read_events(ctl: Controller, after: int, limit: int) -> tuple[str, int]:
    """The response body (built as text: payloads go out exactly as stored) and how many events it has."""
    with ctl.tx() as conn:  # first: a controller that no longer leads must not judge the cursor
        check_cursor(ctl, after)
        ctl.sched_watch.cursor = max(ctl.sched_watch.cursor, after)
        _seen(ctl)
        rows = _READ.tuples(conn, {"after": after, "lim": limit})
    parts = [f'{{"seq":{seq},"event":{{"type":{json.dumps(type_)},"ts":{ts},"payload":{payload}}}}}'
             for seq, ts, type_, payload in rows]
    last = rows[-1][0] if rows else after
    # control_seq: the newest control command, so the scheduler asks for commands only when one is new.
    return (f'{{"events":[{",".join(parts)}],"last_seq":{last},"head_seq":{ctl.last_seq},'
            f'"control_seq":{ctl.next_control - 1}}}', len(rows))


def lag(ctl: Controller) -> tuple[int, float]:
    """How far behind the scheduler is: events it has not fetched yet, and the age in seconds of the
    oldest of them (0 when it is up to date)."""
    behind = max(0, ctl.last_seq - ctl.sched_watch.cursor)
    if not behind:
        return 0, 0.0
    with ctl.tx() as conn:
        ts = conn.execute(sa.select(events.c.ts).where(events.c.seq > ctl.sched_watch.cursor)
                          .order_by(events.c.seq).limit(1)).scalar()
    return behind, 0.0 if ts is None else max(0.0, (time.time_ns() - ts) / 1e9)


def full_state(ctl: Controller) -> dict[str, Any]:
    """Everything a (re)starting scheduler needs, as core events, consistent at ``seq``."""
    now = time.time_ns()
    names = sorted(ctl.hosts)
    with ctl.tx() as conn:
        seq = ctl.last_seq
        # Gated pending jobs are not the scheduler's yet (xce.controller.jobs.gates).
        rows = [dict(r) for r in conn.execute(sa.select(jobs).where(jobs.c.state.in_(UNFINISHED),
                                                                    sa.or_(jobs.c.state != "PEND", jobs.c.gate.is_(None)))
                                              .order_by(jobs.c.id)).mappings()]
    state = (ev.ConfigPush(ts=now, config=ctl.sched_config), ctl.workers_push(names, now),
             ev.ResvalsFull(ts=now, values={n: ctl.hosts[n].load for n in names}))
    out = [{"type": e.TYPE, "ts": now, "payload": wire.payload(e, ctl.sched_driver)} for e in state]
    specs = [jobspec_json(r) for r in rows]
    for i in range(0, len(specs), JOBS_PER_PUSH):
        out.append({"type": ev.JobsPush.TYPE, "ts": now, "payload": wire.jobs_push(specs[i:i + JOBS_PER_PUSH])})
    ctl.sched_watch.cursor = max(ctl.sched_watch.cursor, seq)
    _seen(ctl)
    return {"seq": seq, "events": out}


def scheduler_silence_limit(ctl: Controller) -> float:
    """Seconds without a feed request before the scheduler counts as lost: half the worker timeout, at
    least 5 s (it asks at least every second or two while it runs, even when nothing happens)."""
    return max(5.0, ctl.settings.worker_timeout / 2)


def scheduler_age(ctl: Controller) -> float | None:
    """Seconds since the scheduler last read the feed (None: not since this controller leads)."""
    return None if ctl.sched_watch.seen_mono is None else max(0.0, time.monotonic() - ctl.sched_watch.seen_mono)


def scheduler_alive(ctl: Controller) -> bool:
    age = scheduler_age(ctl)
    return age is not None and age <= scheduler_silence_limit(ctl)


def _seen(ctl: Controller) -> None:
    watch = ctl.sched_watch
    if watch.seen_mono is not None and time.monotonic() - watch.seen_mono > scheduler_silence_limit(ctl):
        log.warning("the scheduler is back, reading the event log after seq %d", watch.cursor,
                    extra={"fields": {"cursor": watch.cursor}})
    watch.seen_mono = time.monotonic()


def check_scheduler(ctl: Controller) -> None:
    """Say once, at WARNING, when the scheduler stops reading the feed (it died, hangs, or cannot
    reach this controller): jobs then pend with no reason given, and nothing else tells."""
    seen = ctl.sched_watch.seen_mono
    if seen is None:
        return
    silent = time.monotonic() - seen
    limit = scheduler_silence_limit(ctl)
    if silent > limit and not ctl.sched_watch.lost_said:
        ctl.sched_watch.lost_said = True
        log.warning("scheduler lost: no request for the event log in %.0f s (%d event(s) unread); jobs are not "
                    "being scheduled", silent, max(0, ctl.last_seq - ctl.sched_watch.cursor),
                    extra={"fields": {"silent_s": round(silent, 1), "lag": ctl.last_seq - ctl.sched_watch.cursor}})
    elif silent <= limit:
        ctl.sched_watch.lost_said = False


def prune(ctl: Controller) -> int:
    """Drop events beyond the retention and decision ids older than their retention."""
    dropped = 0
    keep_from = ctl.last_seq - ctl.settings.event_retention + 1
    old_decisions = time.time_ns() - int(ctl.settings.decision_retention_s * 1e9)
    with ctl.tx() as conn:
        if keep_from > ctl.first_seq:
            dropped = conn.execute(sa.delete(events).where(events.c.seq < keep_from)).rowcount
            ctl.events_pruned(keep_from)
        conn.execute(sa.delete(decisions).where(decisions.c.applied < old_decisions))
        conn.execute(sa.delete(submit_keys).where(submit_keys.c.ts < old_decisions))
        conn.execute(sa.delete(control).where(control.c.seq <= ctl.next_control - 1 - 1000))
    return dropped


def add_control(ctl: Controller, command: dict[str, Any]) -> dict[str, Any]:
    """Queue a command for the scheduler (``{"op": "record_start"|"record_stop", ...}``): not a core event, so it
    has its own log and long-poll (``GET /v1/sched/control``)."""
    now = time.time_ns()
    with ctl.tx() as conn:
        seq = ctl.alloc_control_seq()
        conn.execute(sa.insert(control).values(seq=seq, ts=now, command=dumps(command)))
        ctl.wake_control()
    return {"seq": seq, "ts": now, "command": command}


def read_control(ctl: Controller, after: int, limit: int) -> dict[str, Any]:
    with ctl.tx() as conn:
        rows = conn.execute(sa.select(control).where(control.c.seq > after).order_by(control.c.seq)
                            .limit(limit)).mappings().all()
    cmds = [{"seq": r["seq"], "ts": r["ts"], "command": json.loads(r["command"])} for r in rows]
    return {"commands": cmds, "last_seq": cmds[-1]["seq"] if cmds else after}
