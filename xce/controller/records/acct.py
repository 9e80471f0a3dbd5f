"""Accounting of finished jobs (LSF's ``bacct``, Slurm's ``sacct``) and how long they are kept.

The figures come from the job rows the controller already writes as jobs move (submit, start and
end times, exit status) and from the accounting records written when each job ended (memory peak,
CPU time), read through :func:`xce.controller.records.workload.finished_jobs`, the query the workload export
uses too. A job is counted in the window it *ended* in, so consecutive windows never count a job
twice.

* wait: start - submit (a job killed before it started waited until it ended, and ran 0 s);
* run: end - start; slot-hours: run x tasks;
* CPU time: the job's measured total (user + system), in seconds to the millisecond (``cpu_s``) and
  in milliseconds (``cpu_ms``); memory peak and average in bytes.

Privacy follows :mod:`xce.controller.web.views`: everyone may total everyone's jobs (as ``xce jobs -u
all`` shows them), but a job's command and working directory are shown only to its owner and
admins (or to everyone with ``[privacy] show_all_jobs``).

Retention (``[accounting] retention_days``) deletes finished jobs that ended longer ago, with their
history and accounting records, a bounded batch per pass so a first pass over a long-lived store
does not hold the writing connection for long.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import sqlalchemy as sa

from xce.controller.auth.tokens import Principal
from xce.controller.records.workload import FINISHED, finished_jobs
from xce.controller.service import Controller
from xce.controller.store.schema import job_accounting, job_history, job_scripts, jobs
from xce.controller.web import views

NS = 1_000_000_000
#: Most jobs one ``xce acct`` answer lists (the totals always cover the whole window).
MAX_ROWS = 100_000
#: Most jobs one retention pass deletes.
PRUNE_BATCH = 5000


def _seconds(ns: int | None) -> float | None:
    return None if ns is None else round(ns / NS, 3)


def _seconds_ms(ms: int | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def acct_row(row: dict[str, Any], killer: str | None = None) -> dict[str, Any]:
    """One finished job as ``xce acct`` shows it (seconds, bytes); ``killer``: who killed it, if anyone."""
    start, end, submit = row["start_time"], row["end_time"] or row["submit_time"], row["submit_time"]
    wait = (start if start else end) - submit
    run = end - start if start else 0
    return {
        "jobid": row["id"], "user": row["user"], "queue": row["queue"], "project": row["project"],
        "job_type": row["job_type"], "state": row["state"], "tasks": views.tasks_of(row),
        "array_id": row["array_id"], "array_index": row["array_index"],
        "submit_time": submit, "start_time": start, "end_time": row["end_time"],
        "wait_s": _seconds(max(0, wait)), "run_s": _seconds(max(0, run)),
        "cpu_s": _seconds_ms(row.get("cpu_ms")), "cpu_ms": row.get("cpu_ms"), "mem_peak": row.get("mem_peak"),
        "mem_avg": row.get("mem_mean") if row.get("mem_samples") else None,
        "exit_code": row["exit_code"], "exit_signal": row["exit_signal"], "reason": row["reason"],
        "end": views.end_view(row, killer),
        "placement": views.placement(row), "command": json.loads(row["command"]) if row["command"] else [],
        "cwd": row["cwd"],
    }


Page = list[dict[str, Any]]


def _with_killers(ctl: Controller, pages: Iterator[Page]) -> Iterator[tuple[Page, dict[int, str]]]:
    """Each page with who killed its KILLED jobs, read from the history on a connection of this
    thread's own, as the pages are (the controller's connection belongs to its event loop)."""
    with ctl.engine.connect() as history:
        for page in pages:
            yield page, views.ended_by(history, page)


def report(ctl: Controller, viewer: Principal, *, since_ns: int, until_ns: int, user: str | None,
           queue: str | None, project: str | None) -> dict[str, Any]:
    """Finished jobs that ended in ``[since_ns, until_ns)`` and their totals, as ``viewer`` may see them."""
    show_all = ctl.config.privacy.show_all_jobs
    out: list[dict[str, Any]] = []
    n = slot_s = wait_s = run_s = cpu_s = 0.0
    done = 0
    for page, killers in _with_killers(ctl, finished_jobs(ctl.engine, since_ns=since_ns, until_ns=until_ns,
                                                          queue=queue, user=user, project=project, by="end_time")):
        for row in page:
            view = acct_row(row, killers.get(row["id"]))
            n += 1
            done += view["state"] == "DONE"
            wait_s += view["wait_s"]
            run_s += view["run_s"]
            slot_s += view["run_s"] * view["tasks"]
            cpu_s += view["cpu_s"] or 0
            if len(out) < MAX_ROWS:
                out.append(views.redact(view, viewer, show_all))
    totals = {"jobs": int(n), "done": done, "exit": int(n) - done, "slot_hours": round(slot_s / 3600, 4),
              "mean_wait_s": round(wait_s / n, 3) if n else None, "mean_run_s": round(run_s / n, 3) if n else None,
              "cpu_hours": round(cpu_s / 3600, 4)}
    return {"since": since_ns, "until": until_ns, "filters": {"user": user, "queue": queue, "project": project},
            "jobs": out, "truncated": n > len(out), "totals": totals}


def prune_finished(ctl: Controller, now_ns: int | None = None) -> int:
    """Delete finished jobs that ended more than ``[accounting] retention_days`` ago; how many."""
    days = ctl.config.accounting.retention_days
    if not days:
        return 0
    cutoff = (time.time_ns() if now_ns is None else now_ns) - int(days * 86400 * NS)
    with ctl.tx() as conn:
        rows = conn.execute(sa.select(jobs.c.id, jobs.c.queue, jobs.c.state, jobs.c.script_id)
                            .where(jobs.c.state.in_(FINISHED), jobs.c.end_time < cutoff)
                            .order_by(jobs.c.id).limit(PRUNE_BATCH)).all()
        if not rows:
            return 0
        ids = [r.id for r in rows]
        conn.execute(sa.delete(job_history).where(job_history.c.jobid.in_(ids)))
        conn.execute(sa.delete(job_accounting).where(job_accounting.c.jobid.in_(ids)))
        conn.execute(sa.delete(jobs).where(jobs.c.id.in_(ids)))
        # A spooled script goes with the last job that runs it (an array's elements share one).
        scripts = sorted({r.script_id for r in rows if r.script_id is not None})
        if scripts:
            conn.execute(sa.delete(job_scripts).where(job_scripts.c.id.in_(scripts), ~sa.exists().where(
                jobs.c.script_id == job_scripts.c.id)))
        for r in rows:
            ctl.counts.removed(r.queue, r.state)
    return len(ids)
