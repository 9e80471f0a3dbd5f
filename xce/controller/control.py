"""What people do to jobs after submitting them: kill, suspend, resume, modify.

Each is one transaction: the state change (validated by :mod:`xce.controller.states`), its
history row, its event, and the worker action that carries it out.

A kill takes effect in the controller at once (the job is EXIT with "killed by NAME" as soon as
the request returns) and the worker is sent a ``kill`` action for the process; the worker's later
``finished`` report only fills in the exit code. A job whose start was never fetched by its worker
simply loses that start action, so the worker never sees it at all.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from xce.controller.errors import Conflict, FieldErrors, Forbidden, field_error
from xce.controller.models import ModifyRequest
from xce.controller.service import Controller
from xce.controller.store.schema import actions, jobs
from xce.controller.tokens import Principal
from xce.core.specs import RUN, SSUSP, USUSP

KILL_GRACE_S = 10


def check_owner(p: Principal, job: dict[str, Any], verb: str) -> None:
    if p.is_admin or job["user"] == p.name:
        return
    raise Forbidden(f"cannot {verb} job {job['id']}: it belongs to {job['user']}, "
                    f"and only its owner or an admin may {verb} it")


def drop_undelivered_start(ctl: Controller, jobid: int) -> bool:
    """Remove a start action the worker has not fetched; True if there was one."""
    res = ctl.conn.execute(sa.delete(actions).where(actions.c.jobid == jobid, actions.c.kind == "start",
                                                    actions.c.delivered.is_(None)))
    return res.rowcount > 0


def signal_kill(ctl: Controller, job: dict[str, Any], reason: str) -> None:
    """Stop the job's processes, whatever happened to its record (used by kill and reconciliation)."""
    if drop_undelivered_start(ctl, job["id"]):
        return
    if job.get("head_host"):
        ctl.enqueue(job["head_host"], job["id"], "kill",
                    {"jobid": job["id"], "signal": "SIGTERM", "grace_s": KILL_GRACE_S, "reason": reason})


def kill(ctl: Controller, p: Principal, jobid: int) -> dict[str, Any]:
    job = ctl.job(jobid)
    check_owner(p, job, "kill")
    with ctl.tx():
        was = job["state"]
        reason = f"killed by {p.name}"
        ctl.move(job, "kill", reason, p.name)
        if was in (RUN, SSUSP, USUSP):
            signal_kill(ctl, job, reason)
    return job


def suspend(ctl: Controller, p: Principal, jobid: int) -> dict[str, Any]:
    job = ctl.job(jobid)
    check_owner(p, job, "suspend")
    with ctl.tx():
        reason = f"suspended by {p.name}"
        ctl.move(job, "suspend", reason, p.name)
        ctl.enqueue(job["head_host"], jobid, "suspend", {"jobid": jobid, "signal": "SIGSTOP", "reason": reason})
    return job


def resume(ctl: Controller, p: Principal, jobid: int) -> dict[str, Any]:
    job = ctl.job(jobid)
    check_owner(p, job, "resume")
    if job["state"] == SSUSP and not p.is_admin:
        raise Forbidden(f"cannot resume job {jobid}: it was suspended by the system ({job['reason']}); "
                        f"the scheduler resumes it when resources allow, or an admin can")
    with ctl.tx():
        reason = f"resumed by {p.name}"
        ctl.move(job, "resume", reason, p.name)
        ctl.enqueue(job["head_host"], jobid, "resume", {"jobid": jobid, "signal": "SIGCONT", "reason": reason})
    return job


def modify(ctl: Controller, p: Principal, jobid: int, req: ModifyRequest) -> dict[str, Any]:
    """Change priority, queue or project of an unfinished job; the scheduler gets a JOB_UPDATE."""
    job = ctl.job(jobid)
    check_owner(p, job, "modify")
    if job["state"] in ("DONE", "EXIT"):
        raise Conflict(f"cannot modify job {jobid}: it is {job['state']} (only an unfinished job can be modified)")
    cfg = ctl.config
    errors = []
    if req.queue is not None and req.queue not in cfg.queues:
        errors.append(field_error(["body", "queue"], f"unknown queue {req.queue!r} (expected one of: "
                                  f"{', '.join(sorted(cfg.queues))})", "value_error.queue"))
    if req.project is not None and req.project not in cfg.projects:
        errors.append(field_error(["body", "project"], f"unknown project {req.project!r} (expected one of: "
                                  f"{', '.join(sorted(cfg.projects))})", "value_error.project"))
    if errors:
        raise FieldErrors(errors)
    changes = {k: v for k, v in (("priority", req.priority), ("queue", req.queue), ("project", req.project))
               if v is not None and v != job[k]}
    if not changes:
        return job
    with ctl.tx() as conn:
        conn.execute(sa.update(jobs).where(jobs.c.id == jobid).values(**changes))
        what = ", ".join(f"{k} {job[k]} -> {v}" for k, v in changes.items())
        ctl.history(jobid, job["state"], job["state"], f"modified: {what}", p.name, time.time_ns())
        ctl.publish("JOB_UPDATE", {"jobid": jobid, "priority": changes.get("priority"),
                                   "queue": changes.get("queue"), "project": changes.get("project")})
        if "queue" in changes:
            ctl.counts[(job["queue"], job["state"])] -= 1
            ctl.counts[(changes["queue"], job["state"])] += 1
        job.update(changes)
    return job
