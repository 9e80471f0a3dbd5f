"""How stored rows are shown through the API: one function per kind of record.

Times are integer nanoseconds since the epoch, like every ``ts`` of the event log, so a client
can line up what it reads here with what the scheduler saw. Placement is always a list of
``{"host", "tasks"}`` objects, the first host being the one that runs the job's command.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from xce.controller.service import Controller, HostLive
from xce.controller.states import UNFINISHED
from xce.controller.store.schema import job_history, jobs


def _j(text: str | None, default: Any) -> Any:
    return json.loads(text) if text else default


def placement(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"host": h, "tasks": n} for h, n in _j(row.get("placement"), [])]


def job_summary(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "jobid": row["id"], "user": row["user"], "queue": row["queue"], "project": row["project"],
        "job_type": row["job_type"], "state": row["state"], "tasks": row["tasks"], "priority": row["priority"],
        "command": _j(row["command"], []), "array_id": row["array_id"], "array_index": row["array_index"],
        "submit_time": row["submit_time"], "start_time": row["start_time"], "end_time": row["end_time"],
        "placement": placement(row), "reason": row["reason"], "exit_code": row["exit_code"],
    }


#: What only a job's owner and admins see (Slurm's ``PrivateData=jobs``); ``env`` is never shown to
#: anyone else, even where ``[privacy] show_all_jobs`` lets everyone see the rest.
PRIVATE_FIELDS = ("command", "cwd", "stdout", "stderr")


def sees_everything(p, row: dict[str, Any], show_all_jobs: bool) -> bool:
    return p.is_admin or row["user"] == p.name or show_all_jobs


def redact(view: dict[str, Any], p, show_all_jobs: bool) -> dict[str, Any]:
    """``view`` of someone else's job as ``p`` may see it."""
    if p.is_admin or view["user"] == p.name:
        return view
    if not show_all_jobs:
        for key in PRIVATE_FIELDS:
            if key in view:
                view[key] = None
    if "env" in view:
        view["env"] = None
    return view


def job_detail(row: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    d = job_summary(row)
    d.update({
        "request": row["request"], "sched_request": row["sched_request"],
        "requests": _j(row["requests"], {}), "limits": _j(row["limits"], {}),
        "cwd": row["cwd"], "env": _j(row["env"], {}), "stdout": row["stdout"], "stderr": row["stderr"],
        "pend_reasons": _j(row["pend_reasons"], []), "exit_signal": row["exit_signal"],
        "usage": _j(row["usage"], {}),
        "history": [{"ts": h["ts"], "from": h["from_state"], "to": h["to_state"], "reason": h["reason"],
                     "by": h["actor"]} for h in history],
    })
    return d


def history_of(ctl: Controller, jobid: int) -> list[dict[str, Any]]:
    with ctl.tx() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(job_history).where(job_history.c.jobid == jobid).order_by(job_history.c.id)).mappings()]


def list_jobs(ctl: Controller, *, user: str | None, queue: str | None, states: list[str] | None,
              include_finished: bool, jobids: list[int] | None, limit: int) -> dict[str, Any]:
    q = sa.select(jobs)
    if jobids:
        q = q.where(jobs.c.id.in_(jobids))
    if user is not None:
        q = q.where(jobs.c.user == user)
    if queue is not None:
        q = q.where(jobs.c.queue == queue)
    if states:
        q = q.where(jobs.c.state.in_(states))
    elif not include_finished and not jobids:
        q = q.where(jobs.c.state.in_(UNFINISHED))
    q = q.order_by(jobs.c.id).limit(limit + 1)
    with ctl.tx() as conn:
        rows = [dict(r) for r in conn.execute(q).mappings()]
    return {"jobs": [job_summary(r) for r in rows[:limit]], "truncated": len(rows) > limit}


def host_view(ctl: Controller, h: HostLive, used: dict[str, tuple[int, int]]) -> dict[str, Any]:
    slots_used, njobs = used.get(h.name, (0, 0))
    return {"name": h.name, "status": h.status, "resources": ctl.host_values(h), "load": dict(sorted(h.load.items())),
            "slots_used": slots_used, "njobs": njobs, "registered": h.registered, "last_seen": h.last_seen_ns}


def slot_use(ctl: Controller) -> dict[str, tuple[int, int]]:
    """Slots held and jobs per host, from every job that holds a placement (RUN and suspended)."""
    used: dict[str, list[int]] = {}
    with ctl.tx() as conn:
        for text in conn.execute(sa.select(jobs.c.placement).where(jobs.c.state.in_(UNFINISHED[1:]))).scalars():
            for h, n in _j(text, []):
                u = used.setdefault(h, [0, 0])
                u[0] += n
                u[1] += 1
    return {h: (u[0], u[1]) for h, u in used.items()}


def queue_view(ctl: Controller, name: str) -> dict[str, Any]:
    q = ctl.config.queues[name]
    counts = {s: ctl.counts.get((name, s), 0) for s in ("PEND", "RUN", "SSUSP", "USUSP", "DONE", "EXIT")}
    return {
        "name": name, "priority": q.priority, "status": q.status, "active": q.active,
        "max_running": q.max_running, "max_running_per_user": q.max_running_per_user,
        "project": q.project_name, "preemptible_queues": list(q.preemptible_queues), "preemptible": q.preemptible,
        "description": q.description, "default": name == ctl.config.default_queue,
        "jobs": counts, "njobs": counts["PEND"] + counts["RUN"] + counts["SSUSP"] + counts["USUSP"],
    }
