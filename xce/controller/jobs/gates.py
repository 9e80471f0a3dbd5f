"""Pending jobs the scheduler must not place yet: held (``-H``, ``xce hold``), not before their begin
time (``-b``), waiting for a dependency (``-w``), or beyond their array's running limit (``%N``).

Why the controller and not the core: each of these is a fact about the job's workflow, not about
the cluster, and the controller alone knows it (who held it, how its dependencies ended, how many
elements of its array run). So the controller keeps such a job out of what it sends the scheduler
(no JOBS_PUSH, left out of the full sync) and sets its pend reason itself. The core's decision
sequence for every job it does see is unchanged, and no core event had to be added.

* ``jobs.gate`` is null for a pending job the scheduler may place, else the first of ``held``,
  ``depend``, ``begin``, ``limit`` that applies; the pend reason says the same in words.
* A job that becomes eligible is sent in a JOBS_PUSH; a pending job that was already sent and
  becomes gated (``xce hold``) is withdrawn from the scheduler by a JOB_STATE_CHANGE to EXIT with
  reason ``withdrawn: ...``: to the core a job it may not place is as good as gone, and the job is
  pushed again when it is eligible. Its state in the controller stays PEND throughout.
* A dispatch of a gated job (decided before the withdrawal arrived) is rejected the same way.
* :func:`tick` (a few times a second, on the leader) admits jobs whose begin time has come, array
  elements a finished element made room for, and jobs whose dependencies are now met.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from xce import formats
from xce.controller.jobs import depend
from xce.controller.sched.wire import jobspec_json
from xce.controller.service import Controller, dumps
from xce.controller.store.schema import jobs
from xce.core import events as ev
from xce.core.specs import PEND, RUN, SSUSP, USUSP

HELD, DEPEND, BEGIN, LIMIT = "held", "depend", "begin", "limit"
GATES = (HELD, DEPEND, BEGIN, LIMIT)
RELEASED_STATES = (RUN, SSUSP, USUSP)


def base_gate(ctl: Controller, row: dict[str, Any], now: int) -> str | None:
    """The gate that applies to ``row`` before its array's limit is counted."""
    if row.get("held_by"):
        return HELD
    if row.get("depend"):
        if depend.status(ctl, row)[0] != depend.MET:
            return DEPEND
    if row.get("begin_time") and row["begin_time"] > now:
        return BEGIN
    return None


def reasons(ctl: Controller, row: dict[str, Any], gate: str) -> list[dict[str, Any]]:
    """The pend reason of a gated job, in the scheduler's reason format (step, text)."""
    if gate == HELD:
        text = f"held by {row['held_by']}: `xce release {display_id(row)}` lets it run"
    elif gate == BEGIN:
        text = f"will not start before {formats.second(row['begin_time'])} (-b)"
    elif gate == LIMIT:
        text = (f"array {row['array_id']} runs at most {row['array_limit']} element"
                f"{'s' if row['array_limit'] != 1 else ''} at once (%{row['array_limit']})")
    else:
        text = depend.status(ctl, row)[1]
    return [{"step": gate, "text": text}]


def display_id(row: dict[str, Any]) -> str:
    """How people write this job: ``12``, or ``12[3]`` for element 3 of array 12."""
    if row.get("array_id") is not None and row.get("array_index") is not None:
        return f"{row['array_id']}[{row['array_index']}]"
    return str(row["id"])


def withdraw(ctl: Controller, jobid: int, why: str) -> None:
    """Tell the scheduler to forget a pending job it may no longer place (see the module's docstring)."""
    ctl.publish(ev.JobStateChange(ts=time.time_ns(), jobid=jobid, state="EXIT", reason=f"withdrawn: {why}"))


def push(ctl: Controller, rows: list[dict[str, Any]]) -> None:
    ctl.publish_jobs([jobspec_json(r) for r in rows], time.time_ns())


def set_gate(ctl: Controller, job: dict[str, Any], gate: str | None, why: str = "") -> None:
    """Move a pending job to ``gate`` (inside a transaction): its row, its reason, and what the
    scheduler must be told. Nothing happens when the gate does not change."""
    old = job.get("gate")
    if old == gate:
        if gate is not None:  # the reason may have changed (another unmet condition)
            text = dumps(reasons(ctl, job, gate))
            if text != job.get("pend_reasons"):
                ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(pend_reasons=text))
                job["pend_reasons"] = text
        return
    values: dict[str, Any] = {"gate": gate}
    if gate is None:
        values.update(pend_reasons=None, pend_category=None)
    else:
        values.update(pend_reasons=dumps(reasons(ctl, job, gate)), pend_category=gate)
    ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(**values))
    job.update(values)
    if gate is None:
        push(ctl, [job])
    elif old is None:
        withdraw(ctl, job["id"], why or gate)


def regate(ctl: Controller, job: dict[str, Any], why: str = "") -> None:
    """Recompute a pending job's gate after something about it changed (hold, release, modify)."""
    now = time.time_ns()
    gate = base_gate(ctl, job, now)
    if gate is None and job.get("array_limit"):
        gate = LIMIT if job.get("gate") is not None else None
        set_gate(ctl, job, gate, why)
        if gate == LIMIT:
            admit_limited(ctl, job["array_id"], job["array_limit"])
        return
    set_gate(ctl, job, gate, why)


def requeued(ctl: Controller, job: dict[str, Any]) -> None:
    """A finished job made pending again (``xce requeue``): the scheduler forgot it when it ended, so
    it is pushed anew once eligible (held, dependency, begin time and array limit as at submission)."""
    gate = base_gate(ctl, job, time.time_ns())
    if gate is None and job.get("array_limit"):
        set_gate(ctl, job, LIMIT)
        admit_limited(ctl, job["array_id"], job["array_limit"])
    elif gate is None:
        push(ctl, [job])
    else:
        set_gate(ctl, job, gate)


def admit_limited(ctl: Controller, array_id: int, limit: int) -> int:
    """Let waiting elements of an array run while fewer than ``limit`` are released; how many."""
    c = ctl.conn
    released = c.execute(sa.select(sa.func.count()).select_from(jobs).where(
        jobs.c.array_id == array_id,
        sa.or_(sa.and_(jobs.c.state == PEND, jobs.c.gate.is_(None)), jobs.c.state.in_(RELEASED_STATES)))).scalar()
    room = limit - (released or 0)
    if room <= 0:
        return 0
    rows = [dict(r) for r in c.execute(sa.select(jobs).where(jobs.c.array_id == array_id, jobs.c.state == PEND,
                                                             jobs.c.gate == LIMIT)
                                       .order_by(jobs.c.id).limit(room)).mappings()]
    if not rows:
        return 0
    c.execute(sa.update(jobs).where(jobs.c.id.in_([r["id"] for r in rows]))
              .values(gate=None, pend_reasons=None, pend_category=None))
    for r in rows:
        r.update(gate=None, pend_reasons=None, pend_category=None)
    push(ctl, rows)
    return len(rows)


def tick(ctl: Controller) -> None:
    """Admit whatever became eligible since the last look (runs on the leader, a few times a second)."""
    now = time.time_ns()
    arrays, deps, sweep = ctl.gate_work.take()
    with ctl.tx() as c:
        if sweep:
            deps = True
            for array_id, limit in c.execute(sa.select(jobs.c.array_id, jobs.c.array_limit).distinct().where(
                    jobs.c.state == PEND, jobs.c.gate == LIMIT)):
                arrays.setdefault(array_id, limit)
        due = [dict(r) for r in c.execute(sa.select(jobs).where(jobs.c.state == PEND, jobs.c.gate == BEGIN,
                                                                jobs.c.begin_time <= now)).mappings()]
        if deps:
            due += [dict(r) for r in c.execute(sa.select(jobs).where(jobs.c.state == PEND,
                                                                     jobs.c.gate == DEPEND)).mappings()]
        for row in due:
            regate(ctl, row)
        for array_id, limit in arrays.items():
            admit_limited(ctl, array_id, limit)
