"""The workers: registration, load reports, the action queue, job reports and liveness.

Actions (start, suspend, resume, kill) are rows in a per-host queue with increasing ids. A worker
long-polls ``actions?after=ID`` with the last id it has *carried out*; everything up to that id is
deleted (acknowledged), everything after it is returned again until acknowledged. Delivery is
therefore at least once and workers must treat actions as idempotent (a second ``start`` of a job
it already runs is ignored). An action counts as *delivered* once it has been returned at least
once; that is what separates a dispatch that never reached its worker (requeued to PEND when the
worker disappears) from a job that was running there (reported lost).

Liveness: every report (registration, load, job status) refreshes the host. A host silent for
``worker_timeout`` seconds becomes ``unreach`` (LSF's word; WORKERS_PUSH: nothing new goes there),
its undelivered starts are requeued, and its running jobs go to ``UNKWN``: nobody knows whether
they still run, so they keep their slots and memory (handing those to another job could
oversubscribe the host) until the worker comes back or an administrator declares the host down
(:func:`declare_down`). A worker that comes back reports the ids it still runs (registration, or
the usage of its next load report): those go back to RUN; jobs placed there that it does not list
ended meanwhile (their end report, when the worker saw it, comes first and carries the exit
status); anything the controller no longer considers running there is killed, by the worker,
before it takes new work.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from typing import Any

import sqlalchemy as sa

from xce import endcodes
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, FieldErrors, Forbidden, NotFound, field_error
from xce.controller.hosts import runs, spread
from xce.controller.hosts.providers import SHIPPED_PROVIDERS
from xce.controller.hosts.table import HostLive
from xce.controller.jobs.control import KILL_GRACE_S, drop_undelivered_start, signal_kill
from xce.controller.jobs.states import TransitionError, target
from xce.controller.records import accounting, usage_series
from xce.controller.service import FRESH_RUN, UPDATE_JOB, Controller, dumps
from xce.controller.store.prepared import Prepared
from xce.controller.store.schema import actions, hosts, jobs
from xce.controller.web.models import JobReport, JobStatusReport, LoadReport, RegisterRequest
from xce.core import events as ev
from xce.core.specs import DONE, EXIT, RUN, SSUSP, UNKWN, USUSP, HostSpec
from xce.protocol.actions import KillJob
from xce.protocol.usage import upgrade

#: Resources XCE's own shipped providers (``xce.providers``) publish; the only ``xce.io/`` names a
#: worker may report.
# Every worker's poll and report runs these (xce.controller.store.prepared).
_ACKED = Prepared(sa.delete(actions).where(actions.c.host == sa.bindparam("h"), actions.c.id <= sa.bindparam("after")))
_PENDING = Prepared(sa.select(actions).where(actions.c.host == sa.bindparam("h"), actions.c.id > sa.bindparam("after"))
                    .order_by(actions.c.id).limit(sa.bindparam("lim")))
_DELIVERED = Prepared(sa.update(actions).where(actions.c.id.in_(sa.bindparam("ids", expanding=True)))
                      .values(delivered=sa.bindparam("at")), "ids")
_NEW_HOST = Prepared(sa.insert(hosts))
_HOST_BACK = Prepared(sa.update(hosts).where(hosts.c.name == sa.bindparam("h")))
# An attach key stays: a job that ended before its user attached keeps its terminal's output for them.
_DONE_ACTIONS = Prepared(sa.delete(actions).where(actions.c.jobid == sa.bindparam("jid"),
                                                   actions.c.host == sa.bindparam("h"), actions.c.kind != "attach"))

STRING_VALUED = frozenset({"type", "model", "gpu_model"})
ON_HOST = (RUN, SSUSP, USUSP, UNKWN)
log = logging.getLogger("xce.controller")


def check_worker(p: Principal, name: str) -> None:
    """A worker token named ``*`` speaks for any host; one named after a host only for that host."""
    if p.is_admin or (p.role == "worker" and p.name in ("*", name)):
        return
    raise Forbidden(f"a {p.role} token named {p.name!r} cannot act for worker {name!r}")


def _validate_values(kind: str, values: dict[str, Any], errors: list[dict[str, Any]], *,
                     whole: bool) -> dict[str, Any]:
    from xce.core.resources.naming import (
        BUILTIN_RESOURCES,
        QuantityError,
        ResourceNameError,
        validate_quantity,
        validate_resource_name,
    )

    out: dict[str, Any] = {}
    for name, value in values.items():
        loc = ["body", kind, name]
        if name not in BUILTIN_RESOURCES and name not in SHIPPED_PROVIDERS:
            try:
                validate_resource_name(name)
            except ResourceNameError as exc:
                errors.append(field_error(loc, str(exc), "value_error.resource_name", rule=exc.rule))
                continue
        if name in STRING_VALUED:
            if not isinstance(value, str):
                errors.append(field_error(loc, f'"{name}" must be a string, e.g. "X86_64"', "string_type"))
                continue
            out[name] = value
        elif whole:
            try:
                out[name] = validate_quantity(name, value)
            except QuantityError as exc:
                errors.append(field_error(loc, str(exc), "value_error.quantity", rule=exc.rule))
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            errors.append(field_error(loc, f'load index "{name}" must be a finite number, got {value!r}', "float_type"))
        else:
            out[name] = value
    return out


def _usage_tick(values: dict[str, Any]) -> dict[str, int]:
    """A usage tick is in the worker's own vocabulary (``memory_rss``, ``cpu_ms``: :mod:`xce.protocol.usage`):
    the names are not resource names (the configuration's ``resource_names`` maps them), but the values
    are whole numbers. An older worker's CPU seconds are taken as milliseconds."""
    from xce.core.resources.naming import QuantityError, validate_quantity

    errors: list[dict[str, Any]] = []
    out: dict[str, int] = {}
    for name, value in values.items():
        if not name or len(name) > 128:
            errors.append(field_error(["body", "usage", name], "expected a usage name of 1-128 characters"))
            continue
        try:
            out[name] = validate_quantity(name, value)
        except QuantityError as exc:
            errors.append(field_error(["body", "usage", name], str(exc), "value_error.quantity", rule=exc.rule))
    if errors:
        raise FieldErrors(errors)
    return upgrade(out)


def _host(ctl: Controller, name: str) -> HostLive:
    h = ctl.hosts.get(name)
    if h is None:
        raise NotFound(f"worker {name} is not registered; register it with POST /v1/workers/register first")
    return h


def _touch(ctl: Controller, h: HostLive) -> None:
    """A report arrived: the host is alive; a host that had been given up comes back."""
    h.seen_mono = time.monotonic()
    h.last_seen_ns = time.time_ns()
    if h.status != "ok":
        h.status = "ok"
        ctl.conn.execute(sa.update(hosts).where(hosts.c.name == h.name).values(status="ok", last_seen=h.last_seen_ns))
        ctl.publish(ctl.workers_push([h.name]))


#: A host name as the configuration writes one (``[hosts]``, ``-m``): what a worker may register as,
#: so that no name carries markup or terminal escapes into pages and terminals.
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: Most job slots one host may offer (a figure far beyond any machine, far below what breaks sums).
MAX_SLOTS = 1_000_000
#: The closing reason of a host closed by its own worker's report of trouble (reopened by the
#: worker's first report without one; a host an administrator closed stays closed).
TROUBLE_PREFIX = "worker trouble: "


def _check_identity(req: RegisterRequest, resources: dict[str, Any], errors: list[dict[str, Any]]) -> None:
    if not HOST_NAME.fullmatch(req.name):
        errors.append(field_error(["body", "name"], "expected a host name: letters, digits, '.', '_' or '-', "
                                  "starting with a letter or digit, at most 128", "value_error.host_name"))
    from xce.core.features import feature_problem

    for i, feature in enumerate(req.features):
        problem = feature_problem(feature)
        if problem is not None:
            errors.append(field_error(["body", "features", i], problem, "value_error.feature"))
    slots = resources.get("slots")
    if isinstance(slots, int) and slots > MAX_SLOTS:
        errors.append(field_error(["body", "resources", "slots"], f"at most {MAX_SLOTS} slots per host, got {slots}",
                                  "value_error.quantity"))


def register(ctl: Controller, req: RegisterRequest, publish: bool = True) -> dict[str, Any]:
    """Register a host, or take it back after its worker restarted. ``publish=False`` leaves the
    events telling the scheduler to the caller (:func:`register_many` sends one for all hosts)."""
    errors: list[dict[str, Any]] = []
    resources = _validate_values("resources", req.resources, errors, whole=True)
    _check_identity(req, resources, errors)
    load = _validate_values("load", req.load, errors, whole=False)
    if errors:
        raise FieldErrors(errors)
    now = time.time_ns()
    name = req.name
    kill: list[int] = []
    lost: list[int] = []
    with ctl.tx() as conn:
        old = ctl.hosts.get(name)
        features = tuple(dict.fromkeys(req.features))
        row = {"status": "ok", "resources": dumps(resources), "load": dumps(load), "last_seen": now,
               "containment": req.containment, "features": dumps(list(features))}
        if old is None:
            _NEW_HOST.execute(conn, {"name": name, "registered": now, **row})
        else:
            _HOST_BACK.execute(conn, {"h": name, **row})
        ctl.hosts[name] = HostLive(name, "ok", resources, load, old.registered if old else now, now,
                                   containment=req.containment, closed=old.closed if old else None,
                                   task_address=req.task_address, enforces=tuple(req.enforces),
                                   features=features)
        if publish:
            ctl.publish(ctl.workers_push([name]))
            ctl.publish(ev.ResvalsFull(ts=time.time_ns(), values={name: load}))
        log.log(logging.WARNING if old is not None and old.status != "ok" else logging.INFO,
                "worker %s registered (%s slots%s)", name, resources.get("slots"),
                f", was {old.status}" if old is not None and old.status != "ok" else "",
                extra={"fields": {"host": name, "slots": resources.get("slots")}})
        if req.running is not None and old is None:
            # A host this controller has never had holds none of its jobs: whatever it runs is a
            # stranger (killed), and nothing is lost (no statement: thousands of hosts register at once).
            kill = sorted(set(req.running))
        elif req.running is not None:
            earlier = _earlier_runs(ctl, req)
            kill, lost = _reconcile(ctl, name, set(req.running) - earlier, registering=True)
            kill = sorted(set(kill) | earlier)
    return {"name": name, "status": "ok", "worker_timeout": ctl.settings.worker_timeout,
            "heartbeat_interval": heartbeat_interval(ctl.settings.worker_timeout), "kill": kill, "lost": lost}


def heartbeat_interval(worker_timeout: float) -> float:
    """How often a worker with nothing new to say reports anyway (handed out at registration):
    four heartbeats fit in the worker timeout, so one or two lost to a blip declare nothing down,
    and a host silent for half of it (``xceadmin check``'s warning) has missed two."""
    return max(0.1, worker_timeout / 4)


def _earlier_runs(ctl: Controller, req: RegisterRequest) -> set[int]:
    """Jobs the worker runs under an id the controller has dispatched again since (requeued by
    ``host down --requeue`` and placed anew): what it runs is an earlier run, to be killed, and the
    job's current run is not there."""
    held = {int(k): v for k, v in (req.runs or {}).items() if int(k) in set(req.running or ())}
    rows = ctl.jobs_by_id(sorted(held))
    return {jobid for jobid, run in held.items() if jobid in rows and runs.stale(rows[jobid], run)}


def _reconcile(ctl: Controller, name: str, running: set[int], quiet: bool = False,
               registering: bool = False) -> tuple[list[int], list[int]]:
    """After a worker restart (or its return): lose what it no longer runs, kill what it should not
    run. ``quiet``: the worker did not restart, so only its UNKWN jobs are in question (the usage of a
    load report lists the jobs it runs, and whatever else the controller disagrees with gets its
    kill from the usage path)."""
    placed = [dict(r) for r in ctl.conn.execute(
        sa.select(jobs).where(jobs.c.head_host == name, jobs.c.state.in_(ON_HOST))).mappings()]
    if quiet:
        placed = [j for j in placed if j["state"] == UNKWN]
        running = running & {j["id"] for j in placed}
    # Starts the worker has not carried out: one never fetched is not lost (it is still to come), and
    # a worker back without restarting may be carrying out one it fetched and has not acknowledged
    # (its report was made before): neither is declared lost (xce.controller.hosts.runs).
    taking = sa.select(actions.c.jobid).where(actions.c.host == name, actions.c.kind == "start")
    undelivered = set(ctl.conn.execute(taking if quiet else taking.where(actions.c.delivered.is_(None))).scalars())
    lost = []
    for job in placed:
        if job["id"] in running:
            if job["state"] == UNKWN:
                ctl.move(job, "reach", f"running: worker {name} reported it still runs", "controller")
        elif job["id"] not in undelivered:
            why = (f"lost: ended while worker {name} was unreachable; its exit status is unknown"
                   if job["state"] == UNKWN else f"lost: worker {name} restarted without it")
            runs.forget_start(ctl.conn, job["id"], name)  # fetched again, it would start what is lost
            ctl.move(job, "lose", why, "controller")
            lost.append(job["id"])
    for job in _spanning(ctl.conn, name):
        placed.append(job)
        if job["id"] not in running and job["id"] not in undelivered:
            reason = f"lost: worker {name}, one of its hosts, restarted without it"
            runs.forget_start(ctl.conn, job["id"], name)
            signal_kill(ctl, job, reason)
            ctl.move(job, "lose", reason, "controller")
            lost.append(job["id"])
    known = {j["id"] for j in placed}
    stray = sorted(running - known)
    if registering:
        # The answer names them and the worker kills them before it takes work: a kill action too
        # could reach a run of the same job dispatched here after this registration.
        return stray, lost
    rows = ctl.jobs_by_id(stray)
    for jobid in stray:
        row = rows.get(jobid)
        why = f"job {jobid} is {row['state']} in the controller" if row else f"job {jobid} is unknown to the controller"
        ctl.queue(name, KillJob(jobid=jobid, reason=why, grace_s=KILL_GRACE_S))
    return stray, lost


def report_load(ctl: Controller, name: str, rep: LoadReport) -> dict[str, Any]:
    h = _host(ctl, name)
    errors: list[dict[str, Any]] = []
    load = _validate_values("load", rep.load, errors, whole=False)
    if errors:
        raise FieldErrors(errors)
    delta = {k: v for k, v in load.items() if h.load.get(k) != v}
    kill: list[int] = []
    if rep.task_address:
        h.task_address = rep.task_address
    if h.status == "ok" and not delta and not rep.usage and not rep.trouble and \
            not (h.closed and h.closed.startswith(TROUBLE_PREFIX)):
        _touch(ctl, h)  # a heartbeat that changes nothing: no transaction
        return {"name": name, "status": h.status, "kill": kill}
    with ctl.tx() as conn:
        if h.status == "unreach":
            # Back without restarting (a network partition): what it runs is what it reports usage of,
            # and the runs it holds (one still starting has no usage yet, and is not lost).
            held = {int(k) for k in rep.usage if str(k).isdigit()} | {int(k) for k in rep.runs}
            _reconcile(ctl, name, held, quiet=True)
        _touch(ctl, h)
        _trouble(ctl, h, rep.trouble)
        if delta:
            h.load.update(delta)
            conn.execute(sa.update(hosts).where(hosts.c.name == name).values(load=dumps(h.load),
                                                                             last_seen=h.last_seen_ns))
            ctl.publish(ev.ResvalsDelta(ts=time.time_ns(), values={name: delta}))
        for key, usage in rep.usage.items():
            try:
                jobid = int(key)
            except ValueError:
                raise FieldErrors.one(["body", "usage", key], "expected a job id", "int_parsing") from None
            try:
                res = job_status(ctl, name, jobid, JobStatusReport(status="usage", usage=usage,
                                                                   run=rep.runs.get(str(jobid))))
            except (NotFound, Conflict):
                res = {"action": "kill"}  # not a job of this host: it must not run here
            if res.get("action") == "kill":
                kill.append(jobid)
    return {"name": name, "status": h.status, "kill": kill}


def _trouble(ctl: Controller, h: HostLive, trouble: str | None) -> None:
    """A worker that cannot keep its journal must get no new job (it could not find it again after a
    restart): its host is closed while it says so, and opened again once it no longer does."""
    mine = h.closed is not None and h.closed.startswith(TROUBLE_PREFIX)
    reason = TROUBLE_PREFIX + " ".join(trouble.split()) if trouble else None
    if reason == h.closed or (h.closed is not None and not mine):
        return  # nothing new, or an administrator's closing, which only an administrator lifts
    h.closed = reason
    ctl.conn.execute(sa.update(hosts).where(hosts.c.name == h.name).values(closed=reason))
    ctl.publish(ctl.workers_push([h.name]))
    log.warning("host %s %s", h.name, "opened: its worker's trouble is over" if reason is None else f"closed: {reason}")


def fetch_actions(ctl: Controller, name: str, after: int, limit: int) -> dict[str, Any]:
    _host(ctl, name)
    if name in ctl.hosts.quiet:  # nothing queued, nothing to acknowledge: no transaction
        return {"actions": [], "last_id": after}
    with ctl.tx() as conn:
        if after > 0:
            _ACKED.execute(conn, {"h": name, "after": after})
        rows = _PENDING.rows(conn, {"h": name, "after": after, "lim": limit})
        fresh = [r["id"] for r in rows if r["delivered"] is None]
        if fresh:
            _DELIVERED.execute(conn, {"ids": fresh, "at": time.time_ns()})
    if not rows:
        ctl.hosts.quiet.add(name)
    out = [_action(r) for r in rows]
    return {"actions": out, "last_id": out[-1]["id"] if out else after}


def _action(r: Any) -> dict[str, Any]:
    """An action as :func:`xce.protocol.actions.encode` stored it, with its delivery's ``id`` and
    ``created``; a row queued by an earlier version, whose payload lacks its kind, reads the same."""
    return {"id": r["id"], "kind": r["kind"], "jobid": r["jobid"], "created": r["created"], **json.loads(r["payload"])}


#: Hosts per statement of a many-host poll (well under SQLite's limit on bound parameters).
_CHUNK = 500


def fetch_actions_many(ctl: Controller, names: list[str], after: int, limit: int) -> dict[str, Any]:
    """The actions of several hosts served by one process (``xce emulate-hosts``), in id order.

    Action ids are one sequence over all hosts, so one cursor serves them all: ``after`` says
    every action up to it, of any of these hosts, has been carried out (acknowledged and deleted).
    Hosts known to have nothing queued cost no statement, so an idle fleet's poll is answered from
    memory; ``unknown`` lists names that are not registered (the caller registers them again).
    """
    unknown = [n for n in names if n not in ctl.hosts]
    busy = [n for n in names if n not in ctl.hosts.quiet and n in ctl.hosts]
    rows: list[Any] = []
    emptied: list[str] = []
    if busy:
        with ctl.tx() as conn:
            for i in range(0, len(busy), _CHUNK):
                chunk = busy[i:i + _CHUNK]
                if after > 0:
                    conn.execute(sa.delete(actions).where(actions.c.host.in_(chunk), actions.c.id <= after))
                got = list(conn.execute(sa.select(actions).where(actions.c.host.in_(chunk), actions.c.id > after)
                                        .order_by(actions.c.id).limit(limit)).mappings())
                if len(got) < limit:  # every action of the chunk's hosts is here: the others have none
                    holding = {r["host"] for r in got}
                    emptied += [n for n in chunk if n not in holding]
                rows += got
            rows = sorted(rows, key=lambda r: r["id"])[:limit]
            fresh = [r["id"] for r in rows if r["delivered"] is None]
            if fresh:
                _DELIVERED.execute(conn, {"ids": fresh, "at": time.time_ns()})
        ctl.hosts.quiet.update(emptied)
    out = [dict(_action(r), host=r["host"]) for r in rows]
    return {"actions": out, "last_id": out[-1]["id"] if out else after, "unknown": unknown}


def heartbeat_many(ctl: Controller, alive: list[str], reports: dict[str, LoadReport]) -> dict[str, Any]:
    """Heartbeats and load reports of several hosts in one request. A host whose report changes
    nothing (it is ``ok``, its load the same, no usage, no trouble) is only marked alive, in memory:
    the idle fleet's heartbeat needs no transaction. The others go through :func:`report_load`
    (a host given up as ``unreach`` comes back there)."""
    kill: dict[str, list[int]] = {}
    errors: dict[str, Any] = {}
    unknown: list[str] = []
    slow: list[str] = []
    now_mono, now_ns = time.monotonic(), time.time_ns()
    nothing = LoadReport()
    for name in alive:
        if name in reports:
            continue
        h = ctl.hosts.get(name)
        if h is None:
            unknown.append(name)
        elif h.status == "ok" and not (h.closed and h.closed.startswith(TROUBLE_PREFIX)):
            h.seen_mono, h.last_seen_ns = now_mono, now_ns
        else:
            slow.append(name)
            reports[name] = nothing
    for name, rep in list(reports.items()):
        h = ctl.hosts.get(name)
        if h is None:
            unknown.append(name)
        elif rep is nothing:
            continue
        elif (h.status == "ok" and not rep.usage and not rep.trouble and not rep.task_address
              and not (h.closed or "").startswith(TROUBLE_PREFIX)
              and all(h.load.get(k) == v for k, v in rep.load.items())):
            h.seen_mono, h.last_seen_ns = now_mono, now_ns
        else:
            slow.append(name)
    if slow:
        with ctl.tx():
            for name in slow:
                try:
                    out = report_load(ctl, name, reports[name])
                except FieldErrors as exc:
                    errors[name] = exc.errors
                    continue
                if out["kill"]:
                    kill[name] = out["kill"]
    return {"kill": kill, "unknown": unknown, "errors": errors}


def reports_many(ctl: Controller, batches: dict[str, list[JobReport]]) -> dict[str, Any]:
    """Job reports of several hosts (each host's in order) in one transaction; ``unknown`` names
    hosts that are not registered (their reports are not applied: the caller registers them and
    sends them again)."""
    results: dict[str, list[dict[str, Any]]] = {}
    unknown: list[str] = []
    with ctl.tx():
        for name, reports in batches.items():
            if name not in ctl.hosts:
                unknown.append(name)
                continue
            results[name] = job_reports(ctl, name, reports)["results"]
    return {"results": results, "unknown": unknown}


def register_many(ctl: Controller, reqs: list[RegisterRequest]) -> dict[str, Any]:
    """Several hosts register in one transaction (a process serving many host identities starts
    in seconds, not in one transaction per host); each gets its own answer or refusal."""
    results: list[dict[str, Any]] = []
    done: list[str] = []
    with ctl.tx():
        for req in reqs:
            try:
                results.append(register(ctl, req, publish=False))
            except FieldErrors as exc:
                results.append({"name": req.name, "error": exc.errors, "status": 422})
                continue
            done.append(req.name)
        if done:
            # One event each for the whole batch: the scheduler re-indexes its hosts once, not once a host.
            names = sorted(set(done))
            ctl.publish(ctl.workers_push(names))
            ctl.publish(ev.ResvalsFull(ts=time.time_ns(), values={n: ctl.hosts[n].load for n in names}))
    return {"results": results}


def _fold_usage(stored: dict[str, Any], tick: dict[str, int], ts: int) -> dict[str, Any]:
    """Running peak, sum and count per name, so the accounting record at the job's end needs no
    history of ticks. Counts are per name because a tick need not carry every name."""
    before = stored.get("samples", 0)
    n = before + 1
    peak = dict(stored.get("peak", {}))
    if "sum" in stored:
        sums, counts = dict(stored["sum"]), dict(stored.get("count", {}))
    else:  # folded before sums were kept: rebuild them from the mean
        sums = {k: m * before for k, m in stored.get("mean", {}).items()}
        counts = {k: before for k in sums}
    for k, v in tick.items():
        peak[k] = max(peak.get(k, v), v)
        sums[k] = sums.get(k, 0) + v
        counts[k] = counts.get(k, 0) + 1
    return {"last": dict(sorted(tick.items())), "peak": dict(sorted(peak.items())),
            "mean": {k: round(sums[k] / counts[k], 3) for k in sorted(sums)}, "samples": n,
            "sum": dict(sorted(sums.items())), "count": dict(sorted(counts.items())), "ts": ts,
            "series": usage_series.append(stored.get("series"), tick, ts)}


def job_status(ctl: Controller, name: str, jobid: int, rep: JobStatusReport) -> dict[str, Any]:
    """One report about one job from the worker that runs it; returns what the worker should do."""
    h = _host(ctl, name)
    job, tick = _check_report(ctl, name, jobid, rep)
    with ctl.tx():
        _touch(ctl, h)
        return _apply_report(ctl, name, job, rep, tick)


def job_reports(ctl: Controller, name: str, reports: list[JobReport]) -> dict[str, Any]:
    """Every report a worker made since its last request, in order, in one transaction.

    A report that is refused (a job that is not on this host, a requeue of a job that no longer
    runs) gets its refusal in ``results`` and the others are applied: a worker's batch is a list
    of independent facts, and one stale fact must not hold back the rest.
    """
    h = _host(ctl, name)
    results: list[dict[str, Any]] = []
    with ctl.tx():
        _touch(ctl, h)
        # One read for the batch; each report changes its job's dict as it changes the row, so the
        # next report about the same job (its end after its start) sees it as it now is.
        known = ctl.jobs_by_id([rep.jobid for rep in reports])
        for rep in reports:
            try:
                job, tick = _check_report(ctl, name, rep.jobid, rep, known)
            except (NotFound, Conflict, TransitionError) as exc:
                results.append({"jobid": rep.jobid, "error": str(exc),
                                "status": 404 if isinstance(exc, NotFound) else 409})
                continue
            except FieldErrors as exc:
                results.append({"jobid": rep.jobid, "error": exc.errors, "status": 422})
                continue
            results.append(_apply_report(ctl, name, job, rep, tick))
    return {"results": results}


def _check_report(ctl: Controller, name: str, jobid: int, rep: JobStatusReport,
                  known: dict[int, dict[str, Any]] | None = None) -> tuple[dict[str, Any], Any]:
    """Everything that can refuse a report, before anything changes: the job as it is now (from
    ``known`` when the caller read it already), and the validated usage tick."""
    job = ctl.job(jobid) if known is None else known.get(jobid)
    if job is None:
        raise NotFound(f"job {jobid} does not exist")
    if runs.stale(job, rep.run):  # news of a run that is over: nothing of the job's to check
        return job, None
    if job["head_host"] != name and name not in spread.hosts_of(job):
        raise Conflict(f"job {jobid} is not placed on {name} (it is {job['state']}"
                       + (f" on {job['head_host']})" if job["head_host"] else ")"))
    tick = _usage_tick(rep.usage) if rep.usage else None
    state = job["state"]
    if rep.status == "rejected" and state != RUN:
        raise Conflict(f"cannot requeue job {jobid}: it is {state} (only a RUN job can be requeued)")
    if rep.status == "start_failed" and job["head_host"] == name:
        target(jobid, state, "fail")
    return job, tick


def _usage(job: dict[str, Any], name: str, tick: dict[str, int], now: int) -> tuple[dict[str, int], dict[str, Any]]:
    """The job's tick (summed over its hosts when it has several) and its folded usage."""
    stored = json.loads(job["usage"]) if job["usage"] else {}
    hosts = spread.hosts_of(job)
    if len(hosts) > 1:
        tick = spread.summed_tick(stored, name, tick, hosts)
    usage = _fold_usage(stored, tick, now)
    if "hosts" in stored:
        usage["hosts"] = stored["hosts"]
    return tick, usage


def _apply_secondary(ctl: Controller, name: str, job: dict[str, Any], rep: JobStatusReport, tick: Any) -> dict[str, Any]:
    """A report from a host that holds the job's tasks but not its command: usage counts toward
    the job; its end changes nothing unless the host could not take the job at all."""
    conn = ctl.conn
    jobid = job["id"]
    state = job["state"]
    action = None
    if tick and rep.status != "finished" and state in ON_HOST:
        now = time.time_ns()
        summed, usage = _usage(job, name, tick, now)
        ctl.publish(ev.JobRusage(ts=now, jobid=jobid, usage=summed))
        job["usage"] = dumps(usage)
        UPDATE_JOB.execute(conn, {"jid": jobid, "usage": job["usage"]})
    if rep.status in ("usage", "started", "running", "suspended", "resumed") and state in (DONE, EXIT):
        ctl.queue(name, KillJob(jobid=jobid, run=runs.current(job), reason=f"job {jobid} is {state} in the controller",
                                grace_s=KILL_GRACE_S))
        action = "kill"
    elif rep.status in ("start_failed", "rejected") and state in ON_HOST:
        reason = f"could not start on {name}, one of its hosts: {rep.reason or 'no reason given'}"
        signal_kill(ctl, job, reason)
        ctl.move(job, "fail", reason, name, end_code=endcodes.NOT_STARTED)
    elif rep.status == "finished":
        if rep.end == endcodes.MEMLIMIT:
            _over_memory_on(ctl, name, job, rep.reason)
        _DONE_ACTIONS.execute(conn, {"jid": jobid, "h": name})
    return {"jobid": jobid, "state": job["state"], "action": action}


def _over_memory_on(ctl: Controller, name: str, job: dict[str, Any], why: str | None) -> None:
    """One of the job's hosts killed a task of it at its memory limit: the job ends MEMLIMIT, as
    LSF ends it and as Slurm reports it, stopped on its other hosts if it still runs, and marked so
    if its command already failed of it (its ``srun`` saw the task die first)."""
    reason = f"{why or 'killed: memory limit reached'} on {name}, one of its hosts"
    if job["state"] in ON_HOST:
        signal_kill(ctl, job, reason)
        ctl.move(job, "fail", reason, name, end_code=endcodes.MEMLIMIT)
    elif job["state"] == EXIT and job.get("end_code") == endcodes.EXIT:
        UPDATE_JOB.execute(ctl.conn, {"jid": job["id"], "end_code": endcodes.MEMLIMIT, "reason": reason})
        job.update(end_code=endcodes.MEMLIMIT, reason=reason)


def _apply_stale(ctl: Controller, name: str, job: dict[str, Any], rep: JobStatusReport) -> dict[str, Any]:
    """News of a run the controller has ended (the job was requeued, and may run again, even here):
    the job is left as it is, and a run that says it is still there is told to stop, by its number,
    so that the kill never reaches a newer run of the job. How an old run ended is not the job's
    end, and its actions on this host are the newer run's now: nothing is deleted."""
    jobid = job["id"]
    action = None
    if rep.status in runs.ALIVE:
        ctl.queue(name, KillJob(jobid=jobid, run=rep.run, grace_s=KILL_GRACE_S,
                                reason=f"job {jobid} must not run on {name}: that run of it has ended"))
        action = "kill"
    return {"jobid": jobid, "state": job["state"], "action": action, "run": rep.run, "stale": True}


def _apply_report(ctl: Controller, name: str, job: dict[str, Any], rep: JobStatusReport, tick: Any) -> dict[str, Any]:
    if runs.stale(job, rep.run):
        return _apply_stale(ctl, name, job, rep)
    if job["head_host"] != name:
        return _apply_secondary(ctl, name, job, rep, tick)
    conn = ctl.conn
    jobid = job["id"]
    action = None
    state = job["state"]
    if rep.status in ("usage", "started", "running", "suspended", "resumed"):
        if state == UNKWN:
            ctl.move(job, "reach", f"running: worker {name} reported it still runs", "controller")
            state = job["state"]
        if tick:
            now = time.time_ns()
            tick, usage = _usage(job, name, tick, now)
            ctl.publish(ev.JobRusage(ts=now, jobid=jobid, usage=tick))
            job["usage"] = dumps(usage)
            UPDATE_JOB.execute(conn, {"jid": jobid, "usage": job["usage"]})
        if state in (DONE, EXIT):
            # It runs although the controller gave up on it (lost, killed, requeued): stop it.
            signal_kill(ctl, job, f"job {jobid} is {state} in the controller")
            action = "kill"
    elif rep.status == "finished":
        reason = rep.reason or (f"exit code {rep.exit_code}" if not rep.signal else f"killed by signal {rep.signal}")
        ok = rep.exit_code == 0 and not rep.signal and rep.end != endcodes.MEMLIMIT
        values: dict[str, Any] = {"exit_code": rep.exit_code, "exit_signal": rep.signal}
        if tick:
            values["usage"] = dumps(_usage(job, name, tick, time.time_ns())[1])
        if state in ON_HOST:
            # Exit 0 is DONE whatever ended it (a job that caught its limit's SIGTERM and finished), but
            # for a process of it killed for memory; otherwise the worker's word where it knew one, else
            # the command's own failure.
            end = endcodes.DONE if ok else rep.end if rep.end not in (None, endcodes.DONE) else endcodes.EXIT
            ctl.move(job, "finish" if ok else "fail", "done" if ok else reason, name, end_code=end, **values)
            # Its command ended: the tasks it left on its other hosts end with it.
            spread.enqueue_all(ctl, job, KillJob(jobid=jobid, run=runs.current(job),
                                                 reason=f"job {jobid} ended on {name}", grace_s=KILL_GRACE_S),
                               spread.secondaries(job))
        else:
            # Already decided (killed, lost): keep the verdict, record what really happened.
            UPDATE_JOB.execute(conn, {"jid": jobid, **values})
            job.update(values)
            if state in (DONE, EXIT):
                accounting.rewrite(conn, job, ctl.config.resource_names)
        _DONE_ACTIONS.execute(conn, {"jid": jobid, "h": name})
    elif rep.status == "rejected":
        ctl.move(job, "requeue", f"requeued: worker {name} refused it ({rep.reason or 'no reason given'})",
                 name, placement=None, head_host=None, start_time=None)
        _DONE_ACTIONS.execute(conn, {"jid": jobid, "h": name})
    elif rep.status == "start_failed":
        ctl.move(job, "fail", f"could not start: {rep.reason or 'no reason given'}", name,
                 exit_code=rep.exit_code, exit_signal=rep.signal, end_code=endcodes.NOT_STARTED)
    return {"jobid": jobid, "state": job["state"], "action": action}


def _spanning(conn: Any, name: str) -> list[dict[str, Any]]:
    """Unfinished jobs placed on ``name`` although another host runs their command."""
    rows = conn.execute(sa.select(jobs).where(jobs.c.state.in_(ON_HOST), jobs.c.head_host != name,
                                              jobs.c.placement.like(f'%"{name}"%'))).mappings()
    return [dict(r) for r in rows if any(h == name for h, _ in json.loads(r["placement"] or "[]"))]


def check_liveness(ctl: Controller, now_mono: float | None = None) -> list[str]:
    """Give up on hosts silent for longer than the worker timeout; returns their names."""
    now_mono = time.monotonic() if now_mono is None else now_mono
    timeout = ctl.settings.worker_timeout
    cutoff = now_mono - timeout  # one comparison per host: this scan runs every second over the whole fleet
    silent = sorted(n for n, h in ctl.hosts.items() if h.seen_mono < cutoff and h.status == "ok")
    if not silent:
        return []
    with ctl.tx() as conn:
        for name in silent:
            log.warning("worker %s unreachable: no report for %.0f s (worker timeout %g s); its running jobs are "
                        "UNKWN and keep their slots until it returns or `xceadmin host down %s`",
                        name, now_mono - ctl.hosts[name].seen_mono, timeout, name,
                        extra={"fields": {"host": name, "silent_s": round(now_mono - ctl.hosts[name].seen_mono, 1)}})
            ctl.hosts[name].status = "unreach"
            conn.execute(sa.update(hosts).where(hosts.c.name == name).values(status="unreach"))
            placed = [dict(r) for r in conn.execute(
                sa.select(jobs).where(jobs.c.head_host == name, jobs.c.state.in_(ON_HOST))).mappings()]
            for job in placed:
                if job["state"] == RUN and drop_undelivered_start(ctl, job["id"]):
                    ctl.move(job, "requeue", f"requeued: worker {name} stopped reporting before it took the job",
                             "controller", placement=None, head_host=None, start_time=None)
                elif job["state"] == RUN:
                    ctl.move(job, "unreach", f"unknown: worker {name} stopped reporting; the job keeps its slots "
                             f"until the worker returns or an administrator declares the host down", "controller")
            for job in _spanning(conn, name):
                # A parallel job that had tasks on the silent host cannot finish as placed: stop its
                # command on its first host and report it lost, naming the host that went away.
                reason = f"lost: worker {name}, one of its hosts, stopped reporting"
                signal_kill(ctl, job, reason)
                ctl.move(job, "lose", reason, "controller")
            # A start it fetched stays until it is acknowledged: the worker may be carrying it out.
            unknown = [job["id"] for job in placed if job["state"] == UNKWN]
            conn.execute(sa.delete(actions).where(actions.c.host == name, actions.c.kind == "start",
                                                  actions.c.jobid.not_in(unknown)))
        ctl.publish(ctl.workers_push(silent))
    return silent


def declare_down(ctl: Controller, name: str, requeue: bool, actor: str) -> dict[str, Any]:
    """``xceadmin host down NAME [--requeue]``: what ran there is gone. Its jobs end EXIT "host lost",
    or go back to PEND when ``requeue`` and they were submitted rerunnable; parallel jobs with tasks
    there are stopped. The host gets nothing new until its worker registers again, and a worker that
    comes back kills whatever of those jobs still runs before it takes new work."""
    h = _host(ctl, name)
    ended: list[int] = []
    requeued: list[int] = []
    with ctl.tx() as conn:
        h.status = "down"
        conn.execute(sa.update(hosts).where(hosts.c.name == name).values(status="down"))
        placed = [dict(r) for r in conn.execute(
            sa.select(jobs).where(jobs.c.head_host == name, jobs.c.state.in_(ON_HOST))).mappings()]
        for job in sorted(placed, key=lambda j: j["id"]):
            others = spread.secondaries(job)  # its tasks on other hosts end with it
            if others:
                spread.enqueue_all(ctl, job, KillJob(jobid=job["id"], run=runs.current(job),
                                                     reason=f"host lost: {name} declared down", grace_s=KILL_GRACE_S),
                                   others)
            if requeue and job.get("rerunnable"):
                ctl.move(job, "reschedule", f"requeued: host {name} declared down by {actor} (the job is rerunnable)",
                         actor, **FRESH_RUN)
                requeued.append(job["id"])
            else:
                ctl.move(job, "lose", f"host lost: {name} declared down by {actor}", actor)
                ended.append(job["id"])
        for job in _spanning(conn, name):
            reason = f"host lost: {name}, one of its hosts, declared down by {actor}"
            signal_kill(ctl, job, reason)
            ctl.move(job, "lose", reason, actor)
            ended.append(job["id"])
        conn.execute(sa.delete(actions).where(actions.c.host == name))
        ctl.publish(ctl.workers_push([name]))
    log.warning("host %s declared down by %s: %d job(s) ended, %d requeued", name, actor, len(ended), len(requeued))
    return {"name": name, "status": "down", "ended": ended, "requeued": requeued}


def remove_host(ctl: Controller, name: str, actor: str) -> dict[str, Any]:
    """``xceadmin host remove NAME``: a decommissioned host leaves the cluster (LSF: removed from the
    cluster file; Slurm: the node removed), so that it stops counting as capacity at submission and
    in ``xce whatif``. Refused while a job holds it, or while its worker reports (it would register
    again at its next report)."""
    h = _host(ctl, name)
    if h.status == "ok":
        raise Conflict(f"host {name} still reports: stop its worker first (it would register again), "
                       f"then `xceadmin host down {name}` if it holds jobs")
    with ctl.tx() as conn:
        holding = [dict(r)["id"] for r in conn.execute(sa.select(jobs.c.id).where(
            jobs.c.head_host == name, jobs.c.state.in_(ON_HOST))).mappings()]
        holding += [j["id"] for j in _spanning(conn, name)]
        if holding:
            raise Conflict(f"host {name} holds job(s) {' '.join(map(str, sorted(holding)))}: "
                           f"`xceadmin host down {name}` ends or requeues them first")
        conn.execute(sa.delete(actions).where(actions.c.host == name))
        conn.execute(sa.delete(hosts).where(hosts.c.name == name))
        del ctl.hosts[name]
        # As a host event: the scheduler keeps no job there and counts none of its resources.
        ctl.publish(ev.WorkersPush(ts=time.time_ns(), hosts=(HostSpec(name, "removed"),)))
    log.warning("host %s removed by %s", name, actor)
    return {"name": name, "status": "removed"}


def set_closed(ctl: Controller, name: str, reason: str | None) -> dict[str, Any]:
    """``xceadmin host close NAME`` (a reason) / ``open`` (None): a closed host finishes its jobs and
    gets no new ones (the scheduler sees it as not ``ok``)."""
    h = _host(ctl, name)
    with ctl.tx() as conn:
        h.closed = reason
        conn.execute(sa.update(hosts).where(hosts.c.name == name).values(closed=reason))
        ctl.publish(ctl.workers_push([name]))
    log.warning("host %s %s", name, "opened" if reason is None else f"closed: {reason}")
    return {"name": name, "status": h.status, "closed": reason}
