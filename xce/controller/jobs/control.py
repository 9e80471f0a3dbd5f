"""What people do to jobs after submitting them: kill, suspend, resume, hold, release, modify.

Each is one transaction: the state change (validated by :mod:`xce.controller.jobs.states`), its
history row, its event, and the worker action that carries it out.

A kill takes effect in the controller at once (the job is EXIT with "killed by NAME" as soon as
the request returns) and the worker is sent a ``kill`` action for the process; the worker's later
``finished`` report only fills in the exit code. A job whose start was never fetched by its worker
simply loses that start action, so the worker never sees it at all.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sqlalchemy as sa

from xce import formats
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, FieldErrors, Forbidden, NotFound, field_error
from xce.controller.hosts import spread
from xce.controller.jobs import depend, gates, submission
from xce.controller.jobs.refs import resolve
from xce.controller.jobs.states import UNFINISHED, TransitionError
from xce.controller.service import FRESH_RUN, Controller, dumps
from xce.controller.store.schema import actions, job_accounting, jobs
from xce.controller.web.models import ModifyRequest, SubmitRequest
from xce.controller.web.views import name_filter, name_matches
from xce.core import events as ev
from xce.core.specs import PEND, RUN, SSUSP, UNKWN, USUSP
from xce.jobref import format_indexes
from xce.protocol.actions import KillJob, ResumeJob, SetRunLimit, SignalJob, SuspendJob

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
    """Stop the job's processes on every host it has, whatever happened to its record (used by
    kill and reconciliation). A host whose start was never fetched simply loses that start."""
    for host in spread.hosts_of(job):
        undelivered = ctl.conn.execute(sa.delete(actions).where(
            actions.c.jobid == job["id"], actions.c.host == host, actions.c.kind == "start",
            actions.c.delivered.is_(None))).rowcount
        if not undelivered:
            ctl.queue(host, KillJob(jobid=job["id"], run=job.get("start_time"), reason=reason, grace_s=KILL_GRACE_S))


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
        spread.enqueue_all(ctl, job, SuspendJob(jobid=jobid, run=job["start_time"], reason=reason))
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
        spread.enqueue_all(ctl, job, ResumeJob(jobid=jobid, run=job["start_time"], reason=reason))
    return job


def modify(ctl: Controller, p: Principal, jobid: int, req: ModifyRequest) -> dict[str, Any]:
    """Change priority, queue or project of an unfinished job, its run limit while it runs, and the
    rest of its shape while it pends; the scheduler gets a JOB_UPDATE (or the job anew)."""
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
    pending = _pending_changes(ctl, job, req)
    run_limit = _running_run_limit(ctl, job, req)
    if not changes and not pending and run_limit is None:
        return job
    with ctl.tx() as conn:
        if pending:
            _apply_pending(ctl, p, job, pending)
        if run_limit is not None:
            _apply_run_limit(ctl, p, job, run_limit)
        if not changes:
            return job
        conn.execute(sa.update(jobs).where(jobs.c.id == jobid).values(**changes))
        what = ", ".join(f"{k} {job[k]} -> {v}" for k, v in changes.items())
        ctl.history(jobid, job["state"], job["state"], f"modified: {what}", p.name, time.time_ns())
        ctl.publish(ev.JobUpdate(ts=time.time_ns(), jobid=jobid, priority=changes.get("priority"),
                                 queue=changes.get("queue"), project=changes.get("project")))
        if "queue" in changes:
            ctl.counts.queue_changed(job["state"], job["queue"], changes["queue"])
        job.update(changes)
    return job


_PENDING_ONLY = ("name", "tasks", "request", "stdout", "stderr", "begin_time", "depend", "requests", "limits")


def _merged(stored: str | None, given: dict[str, Any] | None) -> dict[str, Any]:
    """The job's requests or limits with ``given`` merged in; a quantity of 0 removes a name."""
    out = json.loads(stored) if stored else {}
    for name, value in (given or {}).items():
        if value in (0, "0"):
            out.pop(name, None)
        else:
            out[name] = value
    return out


def _running_run_limit(ctl: Controller, job: dict[str, Any], req: ModifyRequest) -> int | None:
    """The new run limit of a running or suspended job (0: none), checked against its queue as at
    submission; None when it is not asked for or the job pends (a pending job's is changed with
    the rest of its shape)."""
    if req.run_limit is None or job["state"] == PEND:
        return None
    if job["state"] not in (RUN, SSUSP, USUSP):
        raise Conflict(f"cannot modify the run limit of job {job['id']}: it is {job['state']} (its host does not "
                       f"answer)")
    errors: list[dict[str, Any]] = []
    limit = submission.resolve_run_limit(job["queue"], ctl.config.queues.get(job["queue"]), req.run_limit or None,
                                         errors)
    if errors:
        raise FieldErrors(errors)
    limit = limit or 0
    return None if limit == (job.get("run_limit") or 0) else limit


def _apply_run_limit(ctl: Controller, p: Principal, job: dict[str, Any], limit: int) -> None:
    """A running job's new run limit: its head host's worker enforces it from now on (counted from
    the job's start, as before) and the scheduler plans with it (backfill)."""
    old = job.get("run_limit") or 0
    ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(run_limit=limit or None))
    job["run_limit"] = limit or None
    was, now = (formats.hms(v) if v else "none" for v in (old, limit))
    ctl.history(job["id"], job["state"], job["state"], f"modified: run limit {was} -> {now}", p.name, time.time_ns())
    ctl.queue(job["head_host"], SetRunLimit(jobid=job["id"], run=job["start_time"], run_limit=limit))
    ctl.publish(ev.JobUpdate(ts=time.time_ns(), jobid=job["id"], run_limit=limit))


def _pending_changes(ctl: Controller, job: dict[str, Any], req: ModifyRequest) -> dict[str, Any]:
    """The pending-only changes, validated exactly as a submission with them would be."""
    asked = {k: getattr(req, k) for k in _PENDING_ONLY if getattr(req, k) is not None}
    if req.run_limit is not None and job["state"] == "PEND":
        asked["run_limit"] = req.run_limit
    if not asked:
        return {}
    if job["state"] != "PEND":
        raise Conflict(f"cannot modify {', '.join(asked)} of job {job['id']}: it is {job['state']} (only a pending "
                       f"job's {', '.join(asked)} can be changed)")
    begin = asked.get("begin_time", job["begin_time"])
    depend = asked.get("depend", job["depend"])
    # Where and how it may be placed is kept: a new -R is folded with its host list again.
    options = json.loads(job["options"]) if job.get("options") else {}
    placement = {k: options[k] for k in ("hosts", "exclude_hosts", "nodes", "cpus_per_task", "constraint", "gpu_model")
                 if k in options}
    array = None  # an element's array, which ``done(12[*])`` pairs element by element
    if job.get("array_id") is not None:
        array = format_indexes([r[0] for r in ctl.conn.execute(
            sa.select(jobs.c.array_index).where(jobs.c.array_id == job["array_id"]).order_by(jobs.c.array_index))])
    sub = SubmitRequest(exclusive=bool(job.get("exclusive")), **placement, array=array,
        command=json.loads(job["command"]), queue=job["queue"], project=job["project"],
        tasks=asked.get("tasks", job["tasks"]), request=asked.get("request", job["request"]),
        requests=_merged(job["requests"], asked.get("requests")), limits=_merged(job["limits"], asked.get("limits")),
        run_limit=asked["run_limit"] or None if "run_limit" in asked else job["run_limit"],
        stdout=asked.get("stdout", job["stdout"]), stderr=asked.get("stderr", job["stderr"]),
        name=asked.get("name", job["name"]), begin_time=begin or None, depend=depend or None,
        allow_pending_forever=not ({"tasks", "request", "requests"} & set(asked)))
    v = submission.validate(ctl, sub, job["user"])
    out = {k: asked[k] for k in asked}
    out.update(requests=dumps(v["requests"]) if v["requests"] else None,
               limits=dumps(v["limits"]) if v["limits"] else None, run_limit=v["run_limit"])
    out["begin_time"] = begin or None
    out["depend"] = v["depend"] if depend else None
    out["sched_request"] = v["sched_request"]
    return {k: val for k, val in out.items() if val != job.get(k)}


def _shown(key: str, value: Any) -> str:
    """A job's value as its history shows it to people: a time, not nanoseconds since the epoch."""
    if value is None or value == "":
        return "none"
    if key == "begin_time":
        return formats.second(value)
    if key == "run_limit":
        return formats.hms(value)
    return str(value)


def _apply_pending(ctl: Controller, p: Principal, job: dict[str, Any], changes: dict[str, Any]) -> None:
    ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(**changes))
    what = ", ".join(f"{k.replace('_', ' ')} {_shown(k, job.get(k))} -> {_shown(k, v)}"
                     for k, v in changes.items() if k != "sched_request")
    ctl.history(job["id"], job["state"], job["state"], f"modified: {what}", p.name, time.time_ns())
    reshaped = {"tasks", "sched_request", "run_limit"} & set(changes)
    job.update(changes)
    if reshaped and job.get("gate") is None:  # the scheduler holds the old shape: it gets the new one
        gates.withdraw(ctl, job["id"], "modified")
        gates.push(ctl, [job])
    gates.regate(ctl, job, "modified")


# -- many jobs at once, named as people write them ---------------------------------------------

def signal_name(text: str) -> str:
    """``USR1``, ``SIGUSR1`` or ``10`` -> ``SIGUSR1``; a one-line refusal for anything else."""
    from xce.signals import parse_signal

    sig = parse_signal(text)
    if sig is None:
        raise FieldErrors.one(["body", "signal"], f"unknown signal {text!r} (expected a name such as SIGUSR1 or "
                              f"USR1, or a number)", "value_error.signal")
    return sig.name


#: Signals that end a job with no process yet (a pending one) as a kill does.
_ENDING = frozenset({"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"})


def _select_mine(ctl: Controller, p: Principal, queue: str | None, name: str | None,
                 user: str | None = None) -> list[dict[str, Any]]:
    """The caller's unfinished jobs, or ``user``'s (``all``: everyone's) for an admin (``bkill -u``)."""
    owner = user or p.name
    if owner != p.name and not p.is_admin:
        raise Forbidden(f"only an admin may act on {'all users' if owner == 'all' else owner}'s jobs")
    q = sa.select(jobs).where(jobs.c.state.in_(UNFINISHED))
    if owner != "all":
        q = q.where(jobs.c.user == owner)
    if queue is not None:
        q = q.where(jobs.c.queue == queue)
    if name is not None:
        q = q.where(name_filter(ctl, name))
    with ctl._begin():
        return [dict(r) for r in ctl.conn.execute(q.order_by(jobs.c.id)).mappings()]


_PAST = {"kill": "is killed", "suspend": "is suspended", "resume": "is resumed", "hold": "is held",
         "release": "is released", "requeue": "is requeued"}


def _requeue_running(ctl: Controller, p: Principal, job: dict[str, Any]) -> str:
    """LSF's ``brequeue`` of a running job: its processes are stopped on every host and it stays
    RUN, holding its slots, until its head host reports the end; then it goes back to PEND
    (:meth:`Controller.move`). Making it PEND at once would hand its slots to another job while
    its processes still run, and a late end report could be taken for its next run's."""
    if job.get("requeue_by"):
        raise Conflict(f"it is already being requeued (by {job['requeue_by']}); it goes back to PEND when its "
                       f"processes have ended")
    ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(requeue_by=p.name))
    job["requeue_by"] = p.name
    reason = f"requeued by {p.name}"
    signal_kill(ctl, job, reason)  # a suspended job is resumed to receive it (JobProcess.terminate)
    ctl.history(job["id"], job["state"], job["state"], f"{reason}: its processes are being stopped", p.name,
                time.time_ns())
    return "is being requeued (it goes back to PEND when its processes have ended)"


def act(ctl: Controller, p: Principal, req) -> dict[str, Any]:
    """``req`` (models.ActRequest) applied to every job it names: one result per job, in order,
    each ``{"jobid", "job" (as written: 12[3]), "ok", "message"}``; a job that cannot be acted on
    does not stop the others."""
    sig = signal_name(req.signal) if req.signal is not None else None
    if sig is not None and req.action != "kill":
        raise FieldErrors.one(["body", "signal"], "a signal goes with the kill action only", "value_error.signal")
    if not (req.jobs or req.all or req.queue or req.name or req.orphans):
        raise FieldErrors.one(["body", "jobs"], "name the jobs: ids, names, all (0), a queue or a job name",
                              "value_error.jobs")
    results: list[dict[str, Any]] = []
    targets: dict[int, dict[str, Any]] = {}
    for text in req.jobs:
        try:
            for r in resolve(ctl, p, text):
                targets.setdefault(r["id"], r)
        except (NotFound, Conflict) as exc:
            results.append({"jobid": None, "job": text, "ok": False, "message": str(exc),
                            "status": 404 if isinstance(exc, NotFound) else 409})
    if req.orphans:
        for r in _select_mine(ctl, p, req.queue, req.name, req.user):
            if r["state"] == "PEND" and r["gate"] == gates.DEPEND and depend.status(ctl, r)[0] == depend.NEVER:
                targets.setdefault(r["id"], r)
    elif req.all or (not req.jobs and (req.queue or req.name)):
        for r in _select_mine(ctl, p, req.queue, req.name, req.user):
            targets.setdefault(r["id"], r)
    elif req.queue is not None or req.name is not None or req.user not in (None, "all"):
        targets = {i: r for i, r in targets.items()
                   if (req.queue is None or r["queue"] == req.queue)
                   and (req.name is None or name_matches(req.name, r["name"]))
                   and req.user in (None, "all", r["user"])}
    with ctl.tx():
        for jobid in sorted(targets):
            job = targets[jobid]
            shown = gates.display_id(job)
            try:
                check_owner(p, job, req.action)
                message = _act_one(ctl, p, job, req.action, sig)
            except TransitionError as exc:
                results.append({"jobid": jobid, "job": shown, "ok": False, "status": 409,
                                "message": str(exc).replace(f"job {jobid}:", f"job {shown}:", 1)})
                continue
            except (Conflict, Forbidden) as exc:
                text = str(exc) if isinstance(exc, Forbidden) else f"cannot {req.action} job {shown}: {exc}"
                results.append({"jobid": jobid, "job": shown, "ok": False, "message": text,
                                "status": 403 if isinstance(exc, Forbidden) else 409})
                continue
            results.append({"jobid": jobid, "job": shown, "ok": True, "message": f"Job <{shown}> {message}."})
    return {"results": results}


def _act_one(ctl: Controller, p: Principal, job: dict[str, Any], action: str, sig: str | None) -> str:
    state = job["state"]
    if action == "kill":
        if sig is not None and (state != PEND or sig not in _ENDING):
            if state == PEND:
                raise Conflict(f"it is PEND: there is no process to send {sig} to (only {', '.join(sorted(_ENDING))} "
                               f"end a pending job)")
            if state not in (RUN, SSUSP, USUSP) or not job.get("head_host"):
                raise Conflict(f"it is {state}: there is no process to send {sig} to")
            spread.enqueue_all(ctl, job, SignalJob(jobid=job["id"], run=job["start_time"], signal=sig))
            ctl.history(job["id"], state, state, f"{sig} sent by {p.name}", p.name, time.time_ns())
            return f"is sent {sig}"
        reason = f"killed by {p.name}" + (f" ({sig})" if sig else "")
        ctl.move(job, "kill", reason, p.name)
        if state in (RUN, SSUSP, USUSP):
            signal_kill(ctl, job, reason)
        return _PAST[action]
    if action in ("suspend", "resume"):
        if action == "resume" and state == SSUSP and not p.is_admin:
            raise Forbidden(f"it was suspended by the system ({job['reason']}); the scheduler resumes it when "
                            f"resources allow, or an admin can")
        reason = f"{_PAST[action].removeprefix('is ')} by {p.name}"
        ctl.move(job, action, reason, p.name)
        change = SuspendJob if action == "suspend" else ResumeJob
        spread.enqueue_all(ctl, job, change(jobid=job["id"], reason=reason))
        return _PAST[action]
    if action == "requeue":
        if state in (RUN, SSUSP, USUSP):
            return _requeue_running(ctl, p, job)
        if state not in ("DONE", "EXIT"):
            raise Conflict(f"it is {state} (only a running, suspended or finished job can be requeued"
                           + ("; its host is unreachable: `xceadmin host down HOST --requeue` once it is known "
                              "to be gone)" if state == UNKWN else ")"))
        ctl.move(job, "rerun", f"requeued by {p.name}", p.name, **FRESH_RUN, gate=None)
        # A job's accounting record is that of its last run (one per job and resource): the run
        # that ends next writes it again.
        ctl.conn.execute(sa.delete(job_accounting).where(job_accounting.c.jobid == job["id"]))
        gates.requeued(ctl, job)
        return _PAST[action]
    if state != PEND:
        raise Conflict(f"it is {state} (only a PEND job can be {'held' if action == 'hold' else 'released'})")
    if action == "hold":
        if job.get("held_by"):
            raise Conflict(f"it is already held (by {job['held_by']})")
        held_by = p.name
    else:
        if not job.get("held_by"):
            raise Conflict("it is not held")
        held_by = None
    ctl.conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(held_by=held_by))
    job["held_by"] = held_by
    ctl.history(job["id"], PEND, PEND, f"{'held' if held_by else 'released'} by {p.name}", p.name, time.time_ns())
    gates.regate(ctl, job, f"held by {p.name}")
    return _PAST[action]
