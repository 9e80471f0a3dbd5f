"""How stored rows are shown through the API and the dashboard: one function per kind of record.

Times are integer nanoseconds since the epoch, like every ``ts`` of the event log, so a client
can line up what it reads here with what the scheduler saw. Placement is always a list of
``{"host", "tasks"}`` objects, the first host being the one that runs the job's command.

Privacy (Slurm's ``PrivateData=jobs``): :func:`redact` is the one rule; the API and the dashboard
both go through it, so the two cannot show different things.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import orjson
import sqlalchemy as sa

from xce.controller.auth.tokens import Principal
from xce.controller.hosts.table import HostLive
from xce.controller.jobs.states import UNFINISHED
from xce.controller.service import Controller
from xce.controller.store.schema import job_history, jobs
from xce.endcodes import KILLED
from xce.protocol.usage import used


def _j(text: str | None, default: Any) -> Any:
    return json.loads(text) if text else default


def placement(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"host": h, "tasks": n} for h, n in _j(row.get("placement"), [])]


def end_view(row: dict[str, Any], by: str | None = None) -> dict[str, Any] | None:
    """How a finished job ended: ``{"code": "KILLED", "by": "ann"}`` (``by``: who killed it, else null);
    null while it has not. A job that ended before codes were kept shows its state's word."""
    return end_of(row["state"], row.get("end_code"), by)


def end_of(state: str, end_code: str | None, by: str | None) -> dict[str, Any] | None:
    """:func:`end_view` of a job in ``state`` that ended with ``end_code``."""
    if state not in ("DONE", "EXIT"):
        return None
    code = end_code or state
    return {"code": code, "by": by if code == KILLED else None}


def ended_by(conn: sa.Connection, rows: list[dict[str, Any]]) -> dict[int, str]:
    """Who killed each KILLED job of ``rows``: the actor of its last move to EXIT. The history keeps
    it (a column would say it twice), so a page of jobs costs one more query only when it has any."""
    ids = sorted({r["id"] for r in rows if r.get("end_code") == KILLED})
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        q = (sa.select(job_history.c.jobid, job_history.c.actor)
             .where(job_history.c.jobid.in_(ids[i:i + 500]), job_history.c.to_state == "EXIT")
             .order_by(job_history.c.id))
        out.update((jobid, actor) for jobid, actor in conn.execute(q))  # the last one wins
    return out


def name_filter(ctl: Controller, pattern: str) -> sa.ColumnElement[bool]:
    """Jobs whose name is ``pattern``, where each ``*`` stands for any run of characters (``bjobs -J
    'a*b'``, ``squeue --name``); nothing else is special. Matching is case-sensitive, as a name is:
    PostgreSQL's LIKE is, SQLite's is not (for ASCII), so SQLite gets GLOB, its case-sensitive twin."""
    if "*" not in pattern:
        return jobs.c.name == pattern
    if ctl.engine is not None and ctl.engine.dialect.name == "sqlite":
        glob = "".join({"[": "[[]", "?": "[?]"}.get(ch, ch) for ch in pattern)
        return jobs.c.name.op("GLOB")(glob)
    like = "".join({"\\": "\\\\", "%": "\\%", "_": "\\_", "*": "%"}.get(ch, ch) for ch in pattern)
    return jobs.c.name.like(like, escape="\\")


def name_matches(pattern: str, name: str | None) -> bool:
    """:func:`name_filter`'s rule for jobs already read."""
    if "*" not in pattern or name is None:
        return name == pattern
    from fnmatch import fnmatchcase

    return fnmatchcase(name, "".join({"[": "[[]", "?": "[?]"}.get(ch, ch) for ch in pattern))


@lru_cache(maxsize=1024)
def _request_tasks(text: str, tasks: int) -> int:
    from xce.core.resreq import RequestSyntaxError, parse_request

    try:
        return parse_request(text, tasks).total_tasks
    except (RequestSyntaxError, ValueError):
        return tasks


def tasks_of(row: dict[str, Any]) -> int:
    """The job's slots: those it was placed on, else those its requirement asks for (a compound
    ``{...} + 2*{...}`` asks for each part's, whatever ``-n`` said)."""
    placed = _j(row.get("placement"), [])
    if placed:
        return sum(int(n) for _, n in placed)
    text = row.get("sched_request") or row.get("request") or ""
    return _request_tasks(text, int(row["tasks"])) if "{" in text else int(row["tasks"])


def _option(name: str, default: Any = None) -> Callable[[dict[str, Any]], Any]:
    return lambda row: _j(row.get("options"), {}).get(name, default)


#: What each column of a job listing is made of: name -> (the store columns it reads, how its value
#: is made from a row holding them). How: None, the one store column's value as stored; a JSON text
#: (``"[]"``), a structure the store keeps as JSON text, that text being its value when there is none;
#: else a function of the row. One table for both ways a job is listed: its summary
#: (:func:`job_summary`, every column, values as Python objects) and the compact answer of
#: ``GET /v1/jobs?columns=...`` (:func:`list_jobs`), which reads only the store columns of the columns
#: asked for and passes stored JSON on as its text, never parsed and encoded again. ``end`` is made
#: with who killed the job (:func:`ended_by`).
SUMMARY: dict[str, tuple[tuple[str, ...], Any]] = {
    "jobid": (("id",), None), "user": (("user",), None), "queue": (("queue",), None),
    "project": (("project",), None), "job_type": (("job_type",), None), "state": (("state",), None),
    "tasks": (("tasks", "placement", "request", "sched_request"), lambda row: tasks_of(row)),
    "priority": (("priority",), None),
    "submit_host": (("options",), _option("submit_host")),
    "cpus_per_task": (("options",), lambda row: int(_j(row.get("options"), {}).get("cpus_per_task") or 1)),
    "requests": (("requests",), "{}"), "command": (("command",), "[]"),
    "array_id": (("array_id",), None), "array_index": (("array_index",), None),
    "submit_time": (("submit_time",), None), "start_time": (("start_time",), None),
    "end_time": (("end_time",), None), "placement": (("placement",), lambda row: placement(row)),
    "reason": (("reason",), None), "exit_code": (("exit_code",), None), "name": (("name",), None),
    "held_by": (("held_by",), None), "begin_time": (("begin_time",), None),
    "array_limit": (("array_limit",), None), "pend_category": (("pend_category",), None),
    "pend_reasons": (("pend_reasons",), "[]"), "end": (("id", "state", "end_code"), None),
}
#: What listings carry beside the summary: what the front-ends print (``run_limit`` in seconds), what a
#: job used (``used``: :func:`xce.protocol.usage.used`, a parse of its usage per job) and, in a
#: collapsed listing, a waiting array's indexes (``array_indexes``: on the array's first element).
LISTED: dict[str, tuple[tuple[str, ...], Any]] = {
    "run_limit": (("run_limit",), None), "exit_signal": (("exit_signal",), None), "cwd": (("cwd",), None),
    "stdout": (("stdout",), None), "stderr": (("stderr",), None),
    "used": (("usage",), lambda row: used(_j(row.get("usage"), {}))), "array_indexes": ((), None),
}
COLUMNS = {**SUMMARY, **LISTED}


def job_summary(row: dict[str, Any], killer: str | None = None) -> dict[str, Any]:
    """``killer``: who killed it, for a KILLED job (:func:`ended_by` finds them for many jobs).
    Beside the row: what the front-ends print with every job (the submission host, CPUs per task,
    the per-slot reservations of ``requests``)."""
    out: dict[str, Any] = {}
    for name, (needs, how) in SUMMARY.items():
        if name == "end":
            out[name] = end_view(row, killer)
        elif how is None:
            out[name] = row.get(needs[0])
        elif isinstance(how, str):
            out[name] = json.loads(row.get(needs[0]) or how)
        else:
            out[name] = how(row)
    return out


#: What only a job's owner and admins see (Slurm's ``PrivateData=jobs``); ``env`` is never shown to
#: anyone else, even where ``[privacy] show_all_jobs`` lets everyone see the rest.
PRIVATE_FIELDS = ("command", "cwd", "stdout", "stderr", "options")


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
    ends = [h["actor"] for h in history if h["to_state"] == "EXIT"]
    d = job_summary(row, ends[-1] if ends else None)
    usage = _j(row["usage"], {})
    d.update({
        "request": row["request"], "sched_request": row["sched_request"],
        "requests": _j(row["requests"], {}), "limits": _j(row["limits"], {}),
        "run_limit": row.get("run_limit"),
        "cwd": row["cwd"], "env": _j(row["env"], {}), "stdout": row["stdout"], "stderr": row["stderr"],
        "pend_reasons": _j(row["pend_reasons"], []), "exit_signal": row["exit_signal"],
        "usage": usage, "used": used(usage), "rerunnable": bool(row.get("rerunnable")),
        "exclusive": bool(row.get("exclusive")), "spooled": row.get("script_id") is not None,
        "options": _j(row.get("options"), {}),
        "history": [{"ts": h["ts"], "from": h["from_state"], "to": h["to_state"], "reason": h["reason"],
                     "by": h["actor"]} for h in history],
    })
    return d


def history_of(ctl: Controller, jobid: int) -> list[dict[str, Any]]:
    with ctl.tx() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(job_history).where(job_history.c.jobid == jobid).order_by(job_history.c.id)).mappings()]


def columns_of(names: list[str]) -> list[str]:
    """The columns of ``names`` that no listing has (none: all are known)."""
    return [n for n in names if n not in COLUMNS]


def list_jobs(ctl: Controller, viewer: Principal, *, columns: list[str], user: str | list[str] | None,
              queue: str | None, states: list[str] | None, include_finished: bool, jobids: list[int] | None,
              limit: int, name: str | list[str] | None = None, ended_after: int | None = None,
              active_after: int | None = None, submitted_before: int | None = None,
              after_id: int | None = None, collapse: bool = False) -> tuple[list[str], list[list[Any]], bool]:
    """Jobs by the filters ``xce jobs``, ``bjobs``, ``squeue`` and ``sacct`` need, in one query: the
    names of ``columns`` (:data:`COLUMNS`) in the order of the rows' values (those read as stored
    first), one row per job, and whether more matched than ``limit``.

    Only the store columns those columns are made of are read, so that a status command costs the
    fields it prints: at 100,000 jobs a job's environment, usage or JSON structures are most of what
    the store would hand over, and parsing them most of the work. A structure stored as JSON text
    comes as that text (an ``orjson.Fragment``, encoded as it is), so only :func:`xce.controller.service.dumpb`
    may encode the rows. Others' private columns are null as :func:`redact` makes them.

    Several users or names are any of them (``squeue -u a,b --name 'x*,y'``). ``active_after`` (ns)
    keeps jobs unfinished or ended since then, finished ones included: Slurm's ``sacct -S`` and the
    recently ended jobs ``squeue -t all`` shows; ``submitted_before`` is ``sacct -E``. ``after_id``:
    the page after one cut at ``limit`` (jobs come in id order). ``collapse``: the pending elements
    of an array as one job (:func:`_with_arrays`), what ``squeue`` prints without ``-r``, at the cost
    of the lines it prints. Without a state, a filter by id or a window, only unfinished jobs are
    listed, through the state index: finished jobs cost such a listing nothing."""
    conds: list[sa.ColumnElement[bool]] = []
    if ended_after is not None:
        conds.append(jobs.c.end_time >= ended_after)
    if active_after is not None:
        conds.append(sa.or_(jobs.c.end_time.is_(None), jobs.c.end_time >= active_after))
    if submitted_before is not None:
        conds.append(jobs.c.submit_time <= submitted_before)
    names = [name] if isinstance(name, str) else list(name or ())
    if names:
        conds.append(sa.or_(*(name_filter(ctl, n) for n in names)))
    if jobids:
        conds.append(jobs.c.id.in_(jobids))
    users = [user] if isinstance(user, str) else list(user or ())
    if users:
        conds.append(jobs.c.user == users[0] if len(users) == 1 else jobs.c.user.in_(users))
    if queue is not None:
        conds.append(jobs.c.queue == queue)
    if states:
        conds.append(jobs.c.state.in_(states))
    elif not include_finished and not jobids and active_after is None:
        conds.append(jobs.c.state.in_(UNFINISHED))
    private = not viewer.is_admin and not ctl.config.privacy.show_all_jobs and any(
        c in PRIVATE_FIELDS for c in columns)
    # The columns that are one store column as stored come first, each row's values a slice of it.
    plain = [c for c in columns if COLUMNS[c][1] is None and c not in _MADE]
    made = [c for c in columns if c not in plain]
    stored = list(dict.fromkeys([*(COLUMNS[c][0][0] for c in plain), "id", *(["user"] if private else []),
                                 *(n for c in made for n in COLUMNS[c][0])]))
    at = {n: i for i, n in enumerate(stored)}
    q = sa.select(*(jobs.c[n] for n in stored)).where(*conds)
    if after_id is not None:
        q = q.where(jobs.c.id > after_id)
    waiting_element = sa.and_(jobs.c.state == "PEND", jobs.c.array_id.is_not(None))
    if collapse:
        q = q.where(sa.not_(waiting_element))
    q = q.order_by(jobs.c.id).limit(limit + 1)
    indexes: dict[int, list[int]] = {}
    with ctl.tx() as conn:
        rows = conn.execute(q).all()
        if collapse:
            rows = _with_arrays(conn, stored, at["id"], conds, waiting_element, after_id, rows, indexes)
        if "end" in columns:
            i, code = at["id"], at["end_code"]
            killers = ended_by(conn, [{"id": r[i], "end_code": KILLED} for r in rows[:limit] if r[code] == KILLED])
        else:
            killers = {}
    makers = [_maker(c, at, killers, indexes) for c in made]
    k = len(plain)
    if len(makers) == 1:
        make = makers[0]
        out = [[*r[:k], make(r)] for r in rows[:limit]]
    else:
        out = [[*r[:k], *[make(r) for make in makers]] for r in rows[:limit]]
    names = plain + made
    if private:
        hidden = [i for i, c in enumerate(names) if c in PRIVATE_FIELDS]
        who = at["user"]
        for values, r in zip(out, rows, strict=False):
            if r[who] != viewer.name:
                for i in hidden:
                    values[i] = None
    return names, out, len(rows) > limit


#: The columns made with more than their store column: who killed a job, a waiting array's indexes.
_MADE = ("end", "array_indexes")


def _maker(column: str, at: dict[str, int], killers: dict[int, str],
           indexes: dict[int, list[int]]) -> Callable[[Any], Any]:
    """How one column's value is made from a stored row (a tuple of the store columns ``at`` places)."""
    needs, how = COLUMNS[column]
    if column == "end":  # one object per way of ending, but for those killed (by someone)
        i, state, code = at["id"], at["state"], at["end_code"]
        ends: dict[tuple[str, str | None], Any] = {}

        def end(r):
            key = (r[state], r[code])
            if key[1] == KILLED:
                return end_of(*key, killers.get(r[i]))
            if key not in ends:
                ends[key] = end_of(*key, None)
            return ends[key]
        return end
    if column == "array_indexes":
        i = at["id"]
        return lambda r: indexes.get(r[i])
    if how is None:
        i = at[needs[0]]
        return lambda r: r[i]
    if isinstance(how, str):
        i, empty = at[needs[0]], orjson.Fragment(how)
        return lambda r: orjson.Fragment(r[i]) if r[i] else empty
    pairs = [(n, at[n]) for n in needs]
    return lambda r: how({n: r[i] for n, i in pairs})


def _with_arrays(conn: sa.Connection, stored: list[str], at_id: int, conds, waiting_element,
                 after_id: int | None, rows: list[Any], indexes: dict[int, list[int]]) -> list[Any]:
    """``rows`` with the pending elements of each array as one: its first pending element, whose
    indexes (all of them, ascending) go into ``indexes`` under its id. The store groups the others
    (one row per array: its first id, its indexes as text), so an array of 10,000 waiting elements
    costs one full row; an array shows on the page where its first element falls."""
    grouped = sa.select(sa.func.min(jobs.c.id),
                        sa.func.aggregate_strings(sa.cast(jobs.c.array_index, sa.String), ",")) \
        .where(*conds, waiting_element).group_by(jobs.c.array_id)
    firsts = {first: sorted(int(i) for i in text.split(",")) for first, text in conn.execute(grouped).all()}
    wanted = sorted(i for i in firsts if after_id is None or i > after_id)
    heads: list[Any] = []
    for k in range(0, len(wanted), 500):
        heads += conn.execute(sa.select(*(jobs.c[n] for n in stored)).where(jobs.c.id.in_(wanted[k:k + 500]))).all()
    indexes.update((i, firsts[i]) for i in wanted)
    return sorted([*rows, *heads], key=lambda r: r[at_id])


def ids_of(ctl: Controller, refs: list[tuple[int, tuple[int, ...] | None]]) -> list[list[int] | None]:
    """Job ids and array elements (``12``, ``12_3``, ``12[1-5]``) resolved in one query, as
    :func:`xce.controller.jobs.refs.resolve` resolves each: an array's id names all its elements, any
    other id its own job. None for a reference that names nothing, or not all it asks for (its
    caller resolves that one alone, for the sentence saying why): ``squeue -j`` of ten ids costs one
    query, not twenty."""
    heads = sorted({jobid for jobid, _ in refs})
    rows: list[tuple[int, int | None, int | None]] = []
    with ctl.tx() as conn:
        for i in range(0, len(heads), 500):
            part = heads[i:i + 500]
            rows += conn.execute(sa.select(jobs.c.id, jobs.c.array_id, jobs.c.array_index)
                                 .where(sa.or_(jobs.c.id.in_(part), jobs.c.array_id.in_(part)))).all()
    elements: dict[int, dict[int, int]] = {}
    plain: set[int] = set()
    for jobid, array_id, index in rows:
        plain.add(jobid)
        if array_id is not None:
            elements.setdefault(array_id, {})[index] = jobid
    out: list[list[int] | None] = []
    for jobid, indexes in refs:
        members = elements.get(jobid)
        if indexes is None:
            out.append(sorted(members.values()) if members else ([jobid] if jobid in plain else None))
        elif members and all(i in members for i in indexes):
            out.append(sorted(members[i] for i in indexes))
        else:
            out.append(None)
    return out


#: The category of a pending job no round has considered yet.
UNSCHEDULED = "unscheduled"

#: Columns a jobs page may sort on (the job id breaks ties, so pages never overlap or skip).
SORTS = {"id": jobs.c.id, "user": jobs.c.user, "queue": jobs.c.queue, "state": jobs.c.state,
         "priority": jobs.c.priority, "tasks": jobs.c.tasks, "start": jobs.c.start_time, "end": jobs.c.end_time}
_LIST_COLUMNS = (jobs.c.id, jobs.c.user, jobs.c.queue, jobs.c.project, jobs.c.job_type, jobs.c.state,
                 jobs.c.tasks, jobs.c.priority, jobs.c.command, jobs.c.array_id, jobs.c.array_index,
                 jobs.c.submit_time, jobs.c.start_time, jobs.c.end_time, jobs.c.placement, jobs.c.reason,
                 jobs.c.exit_code, jobs.c.pend_category, jobs.c.name, jobs.c.held_by, jobs.c.begin_time,
                 jobs.c.array_limit, jobs.c.end_code)


@dataclass(frozen=True)
class JobPage:
    """One page of a filtered, sorted job listing (the dashboard's jobs page)."""

    user: str | None = None
    queue: str | None = None
    states: tuple[str, ...] = ()
    category: str | None = None  # pend reason category (PEND jobs only)
    sort: str = "id"
    descending: bool = True
    offset: int = 0
    limit: int = 50


def page_jobs(ctl: Controller, viewer: Principal, page: JobPage) -> tuple[list[dict[str, Any]], int]:
    """The jobs of one page (summaries as ``viewer`` may see them) and how many match.

    Paged in the database (``LIMIT``/``OFFSET`` on an indexed order), so a store of 100,000 jobs costs
    one page of rows; the total comes from the in-memory tallies when the filter allows it."""
    conds = []
    if page.user is not None:
        conds.append(jobs.c.user == page.user)
    if page.queue is not None:
        conds.append(jobs.c.queue == page.queue)
    if page.states:
        conds.append(jobs.c.state.in_(page.states))
    if page.category is not None:
        conds.append(jobs.c.state == "PEND")
        conds.append(jobs.c.pend_category.is_(None) if page.category == UNSCHEDULED
                     else jobs.c.pend_category == page.category)
    column = SORTS[page.sort]
    order = [column.desc(), jobs.c.id.desc()] if page.descending else [column.asc(), jobs.c.id.asc()]
    if page.sort == "id":
        order = order[:1]
    q = sa.select(*_LIST_COLUMNS).where(*conds).order_by(*order).offset(page.offset).limit(page.limit)
    with ctl.tx() as conn:
        rows = [dict(r) for r in conn.execute(q).mappings()]
        killers = ended_by(conn, rows)
        if page.user is None and page.category is None:
            total = sum(n for (qname, state), n in ctl.counts.items()
                        if (page.queue is None or qname == page.queue) and (not page.states or state in page.states))
        else:
            total = conn.execute(sa.select(sa.func.count()).select_from(jobs).where(*conds)).scalar() or 0
    show_all = ctl.config.privacy.show_all_jobs
    return [redact({**job_summary(r, killers.get(r["id"])), "pend_category": r["pend_category"]}, viewer, show_all)
            for r in rows], total


def pending_by_category(ctl: Controller) -> dict[str, int]:
    """Pending jobs by the step of their first pend reason (an index-only count)."""
    with ctl.tx() as conn:
        rows = conn.execute(sa.select(jobs.c.pend_category, sa.func.count()).where(jobs.c.state == "PEND")
                            .group_by(jobs.c.pend_category)).all()
    out = {(c or UNSCHEDULED): n for c, n in rows}
    return dict(sorted(out.items()))


def host_view(ctl: Controller, h: HostLive, used: dict[str, tuple[int, int]]) -> dict[str, Any]:
    slots_used, njobs = used.get(h.name, (0, 0))
    resources = ctl.host_values(h)
    exclusive = ctl.slots.exclusive_on(h.name)
    if exclusive is not None:  # the whole host is the job's, as the scheduler charges it
        slots_used = max(slots_used, int(resources.get("slots", slots_used)))
    return {"name": h.name, "status": h.status, "resources": resources, "load": dict(sorted(h.load.items())),
            "slots_used": slots_used, "njobs": njobs, "registered": h.registered, "last_seen": h.last_seen_ns,
            "containment": h.containment, "closed": h.closed, "exclusive_job": exclusive}


def slot_use(ctl: Controller) -> dict[str, tuple[int, int]]:
    """Slots held and jobs per host, from every job that holds a placement (RUN and suspended)."""
    return ctl.slots.by_host()


def queue_view(ctl: Controller, name: str) -> dict[str, Any]:
    q = ctl.config.queues[name]
    counts = {s: ctl.counts.get((name, s), 0) for s in ("PEND", "RUN", "SSUSP", "USUSP", "DONE", "EXIT")}
    return {
        "name": name, "priority": q.priority, "status": q.status, "active": q.active,
        "max_running": q.max_running, "max_running_per_user": q.max_running_per_user,
        "project": q.project_name, "preemptible_queues": list(q.preemptible_queues), "preemptible": q.preemptible,
        "description": q.description, "default": name == ctl.config.default_queue,
        "jobs": counts, "njobs": counts["PEND"] + counts["RUN"] + counts["SSUSP"] + counts["USUSP"],
        # Why it is closed (xceadmin queue close), else null; a file's own closure has no reason.
        "closed_reason": ctl.queue_closed.get(name),
        # Run limits in seconds, as jobs carry theirs (null: none).
        "run_limit": None if q.run_limit is None else q.run_limit * 60,
        "max_run_limit": None if q.max_run_limit is None else q.max_run_limit * 60,
        "process_limit": q.process_limit, "preempt_signal": q.preempt_signal, "preempt_policy": q.preempt_policy,
        "picker": q.job_pick_plugin or ctl.config.scheduler.job_pick_plugin,
        "backfill_depth": q.backfill_depth, "reservations": q.reservations,
        "fairshare_by": q.fairshare_by, "shares": dict(sorted(q.shares.items())),
        "fairshare_half_life": q.fairshare_half_life,
        "hooks": {k: v for k, v in q.hooks.model_dump().items() if v is not None},
    }


def jobs_on_host(ctl: Controller, viewer: Principal, name: str, recent: int = 20) -> dict[str, list[dict[str, Any]]]:
    """Jobs holding slots on host ``name`` (any host of their placement), and the last ones it ran."""
    rows = ctl.jobs_by_id(ctl.slots.jobs_on(name))
    with ctl.tx() as conn:
        finished = [dict(r) for r in conn.execute(
            sa.select(jobs).where(jobs.c.head_host == name, jobs.c.state.in_(("DONE", "EXIT")))
            .order_by(jobs.c.id.desc()).limit(recent)).mappings()]
        killers = ended_by(conn, finished)
    show_all = ctl.config.privacy.show_all_jobs
    return {"running": [redact(job_summary(rows[i]), viewer, show_all) for i in sorted(rows)],
            "finished": [redact(job_summary(r, killers.get(r["id"])), viewer, show_all) for r in finished]}
