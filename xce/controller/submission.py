"""Turning a submission into committed jobs and the JOBS_PUSH the scheduler reads.

Everything a person can get wrong is found before anything is written, and reported all at
once as field errors naming the field (``["body", "requests", "example.com/gpu"]``) and what
was expected. The resource-requirement text is checked by the core's own parser, so the
controller never accepts a string the scheduler would choke on.

``requests`` are folded into the scheduler-facing requirement (``sched_request``) as rusage
entries the user did not already write: ``select[...]`` + ``{"example.com/gpu": 1}`` becomes
``select[...] rusage[example.com/gpu=1]``; when the text already has a ``rusage[...]`` clause the
entries are added inside it (the grammar allows one rusage clause per primary). Memory amounts are
written with a unit (``4G``, ``1536K``) because a bare number means MiB in the text form. The
user's text and both dictionaries are stored unchanged beside it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

import sqlalchemy as sa

from xce.controller.errors import FieldErrors, field_error
from xce.controller.models import MAX_COMMAND_BYTES, MAX_ENV_BYTES, SubmitRequest
from xce.controller.service import JOBS_PER_PUSH, Controller, dumps
from xce.controller.store.schema import jobs, submit_keys
from xce.core.specs import PEND

#: Built-in names that describe a host, not something a job consumes or may be capped at.
NOT_REQUESTABLE = frozenset({"r15s", "r1m", "r15m", "ut", "type", "model"})
_RUSAGE = re.compile(r"rusage\s*\[([^\]]*)\]")
log = logging.getLogger("xce.controller")
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def _loc(*parts: str | int) -> tuple[str | int, ...]:
    return ("body", *parts)


def _quantities(kind: str, given: dict[str, Any], errors: list[dict[str, Any]]) -> dict[str, int]:
    from xce.core.quantity import parse_quantity
    from xce.core.resources.naming import QuantityError, ResourceNameError, validate_quantity, validate_resource_name

    out: dict[str, int] = {}
    for name, value in given.items():
        if name in NOT_REQUESTABLE:
            errors.append(field_error(_loc(kind, name), f'"{name}" is a host attribute or load index, not a quantity a '
                                      f"job can {'request' if kind == 'requests' else 'be limited to'}; expected a "
                                      f"consumable such as mem, slots or a DOMAIN/NAME resource",
                                      "value_error.resource_name"))
            continue
        try:
            validate_resource_name(name, allow_reserved=True)
        except ResourceNameError as exc:
            errors.append(field_error(_loc(kind, name), str(exc), "value_error.resource_name", rule=exc.rule))
            continue
        try:
            # Text follows the one quantity grammar (as on the command line); a JSON number is exact.
            out[name] = parse_quantity(name, value) if isinstance(value, str) else validate_quantity(name, value)
        except QuantityError as exc:
            errors.append(field_error(_loc(kind, name), str(exc), "value_error.quantity", rule=exc.rule))
    return out


def _parse(text: str, tasks: int, loc: tuple[str | int, ...], errors: list[dict[str, Any]]):
    from xce.core.resreq import RequestSyntaxError, parse_request

    try:
        return parse_request(text, tasks)
    except RequestSyntaxError as exc:
        errors.append(field_error(loc, str(exc),
                                  "value_error.request_syntax", column=exc.column, expected=exc.expected,
                                  found=exc.found))
    except ValueError as exc:
        errors.append(field_error(loc, str(exc), "value_error.request"))
    return None


def known_names(ctl: Controller) -> tuple[set[str], set[str]]:
    """Names a select or order may read, and the host names ``hname`` may be compared with."""
    from xce.controller.fleet import SHIPPED_PROVIDERS
    from xce.core.resources.naming import BUILTIN_RESOURCES

    cfg = ctl.config
    names = set(BUILTIN_RESOURCES) | {"hname"} | SHIPPED_PROVIDERS | set(cfg.shared_resources)
    names |= set(cfg.resource_names.values())
    for h in ctl.hosts.values():
        names.update(h.resources)
        names.update(h.load)
    return names, set(ctl.hosts) | set(cfg.hosts)


def unknown_names(ctl: Controller, parsed, loc: tuple[str | int, ...], errors: list[dict[str, Any]]) -> None:
    """A select/order name nobody defines would silently never match (or never order): refuse it,
    naming it, as LSF does; likewise a host name compared with ``hname`` that no host has."""
    from xce.core.resreq import Binary, Name, Str, Unary

    names, hosts = known_names(ctl)
    for primary in parsed.primaries:
        for name in primary.value_names():
            if name not in names:
                errors.append(field_error(loc, f'unknown name "{name}" in select[]/order[]: no host and no '
                                          f"configuration defines it (expected one of: {', '.join(sorted(names))})",
                                          "value_error.unknown_name", name=name))
        stack = [primary.select] if primary.select is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, Binary):
                pair = (node.left, node.right)
                for a, b in (pair, pair[::-1]):
                    if isinstance(a, Name) and a.name == "hname" and isinstance(b, Str) and b.value not in hosts:
                        errors.append(field_error(loc, f'unknown host "{b.value}" in select[] (expected one of: '
                                                  f"{', '.join(sorted(hosts)) or 'no host has registered yet'})",
                                                  "value_error.unknown_host", name=b.value))
                stack.extend(pair)
            elif isinstance(node, Unary):
                stack.append(node.operand)


def fold_requests(text: str, parsed, requests: dict[str, int]) -> str | None:
    """The scheduler-facing requirement, or None when ``requests`` cannot be folded into ``text``."""
    from xce.core.quantity import format_quantity

    if not requests:
        return text
    if parsed.kind != "PRIMARY":
        return None
    written = {name for name, _ in parsed.primaries[0].rusage}
    extra = [f"{n}={format_quantity(n, q)}" for n, q in requests.items() if n not in written]
    if not extra:
        return text
    match = _RUSAGE.search(text)
    if match is None:
        return f"{text.strip()} rusage[{':'.join(extra)}]".lstrip()
    inside = match.group(1).rstrip()
    joined = ":".join(([inside] if inside else []) + extra)
    return f"{text[:match.start()]}rusage[{joined}]{text[match.end():]}"


def validate(ctl: Controller, req: SubmitRequest, user: str | None = None) -> dict[str, Any]:
    """Everything about one submission that can be wrong, checked before anything is written."""
    errors: list[dict[str, Any]] = []
    cfg = ctl.config
    queue = req.queue or cfg.default_queue
    qcfg = cfg.queues.get(queue)
    if qcfg is None:
        errors.append(field_error(_loc("queue"), f"unknown queue {queue!r} (expected one of: "
                                  f"{', '.join(sorted(cfg.queues))})", "value_error.queue", expected=sorted(cfg.queues)))
    elif qcfg.status != "open":
        errors.append(field_error(_loc("queue"), f"queue {queue!r} is closed to new submissions",
                                  "value_error.queue_closed"))
    if req.project is not None:
        project = req.project
        if project not in cfg.projects:
            errors.append(field_error(_loc("project"), f"unknown project {project!r} (expected one of: "
                                      f"{', '.join(sorted(cfg.projects))})", "value_error.project"))
    else:
        project = (qcfg.project_name if qcfg is not None else None) or "default"

    if sum(len(a) for a in req.command) > MAX_COMMAND_BYTES:
        errors.append(field_error(_loc("command"), f"command is longer than {MAX_COMMAND_BYTES} characters in total",
                                  "value_error.too_long"))
    if any("\0" in a for a in req.command):
        errors.append(field_error(_loc("command"), "arguments must not contain NUL characters", "value_error"))
    if not req.command[0]:
        errors.append(field_error(_loc("command", 0), "the program name must not be empty", "value_error"))
    env_bytes = 0
    for key, value in req.env.items():
        env_bytes += len(key) + len(value)
        if not key or "=" in key or "\0" in key or "\0" in value:
            errors.append(field_error(_loc("env", key), "expected a variable name without '=' or NUL and a value "
                                      "without NUL", "value_error.env"))
    if env_bytes > MAX_ENV_BYTES:
        errors.append(field_error(_loc("env"), f"environment is larger than {MAX_ENV_BYTES} bytes", "value_error.too_long"))

    run_limit = resolve_run_limit(queue, qcfg, req.run_limit, errors)
    requests = _quantities("requests", req.requests, errors)
    limits = _quantities("limits", req.limits, errors)
    parsed = _parse(req.request, req.tasks, _loc("request"), errors)
    if parsed is not None:
        unknown_names(ctl, parsed, _loc("request"), errors)
    sched_request = req.request
    if parsed is not None and requests and not errors:
        folded = fold_requests(req.request, parsed, requests)
        if folded is None:
            errors.append(field_error(_loc("requests"), "requests can only be folded into a simple requirement; "
                                      "with a compound or alternative request write rusage[...] inside each {...}",
                                      "value_error.requests"))
        elif _parse(folded, req.tasks, _loc("requests"), errors) is not None:
            sched_request = folded
    array = _array(req.array, errors)
    if req.name is not None:
        from xce.jobref import RefError, check_name

        try:
            check_name(req.name)
        except RefError as exc:
            errors.append(field_error(_loc("name"), str(exc), "value_error.name"))
    depend = None
    if req.depend is not None:
        from types import SimpleNamespace

        from xce.controller.depend import DependError, resolve

        try:  # jobs named by name are the submitter's own
            depend = resolve(ctl, SimpleNamespace(name=user, is_admin=False), req.depend)
        except DependError as exc:
            errors.append(field_error(_loc("depend"), str(exc), "value_error.depend", column=exc.column))
    if parsed is not None and not errors and not req.allow_pending_forever:
        from xce.controller.feasible import Capacity

        why = Capacity.of(ctl).problem(sched_request, req.tasks)
        if why is not None:
            errors.append(field_error(_loc(), f"the job can never run on this cluster: {why} "
                                      f"(--allow-pending-forever submits it anyway)", "value_error.never_runnable"))
    if errors:
        raise FieldErrors(errors)
    return {"queue": queue, "project": project, "requests": requests, "limits": limits,
            "sched_request": sched_request, "run_limit": run_limit, "array": array, "depend": depend}


def hms(seconds: int) -> str:
    """A duration as people read run limits: ``1:30:00``, ``0:05:00``."""
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def resolve_run_limit(queue: str, qcfg: Any, asked: int | None, errors: list[dict[str, Any]]) -> int | None:
    """The job's run limit in seconds: what it asked for, else the queue's default, else its maximum
    (as Slurm gives a job without ``--time`` its partition's DefaultTime, else MaxTime)."""
    if qcfg is None:
        return asked
    most = qcfg.max_run_limit * 60 if qcfg.max_run_limit is not None else None
    if asked is None:
        return qcfg.run_limit * 60 if qcfg.run_limit is not None else most
    if most is not None and asked > most:
        errors.append(field_error(_loc("run_limit"), f"run limit {hms(asked)} is longer than queue {queue!r} allows (max_run_limit = {qcfg.max_run_limit} min)",
                                  "value_error.run_limit", limit=most))
    return asked


def _array(given: int | str | None, errors: list[dict[str, Any]]):
    """The array's indexes and limit (xce.jobref.ArraySpec), or None for a single job."""
    from xce.jobref import MAX_ELEMENTS, ArraySpec, RefError, parse_array

    if given is None:
        return None
    if isinstance(given, bool) or (isinstance(given, int) and not 1 <= given <= MAX_ELEMENTS):
        errors.append(field_error(_loc("array"), f"expected 1 to {MAX_ELEMENTS} elements, got {given}",
                                  "value_error.array"))
        return None
    if isinstance(given, int):
        return ArraySpec(tuple(range(1, given + 1)))
    try:
        return parse_array(given)
    except RefError as exc:
        errors.append(field_error(_loc("array"), str(exc), "value_error.array"))
        return None


def _expand(path: str | None, jobid: int, index: int | None) -> str | None:
    """``%J`` is the job id (an array's own id for each element), ``%I`` the array index (0 for a single job)."""
    if path is None:
        return None
    return path.replace("%J", str(jobid)).replace("%I", str(index if index is not None else 0))


def jobspec_json(row: dict[str, Any]) -> dict[str, Any]:
    """A job row as ``xce.core.specs.JobSpec.to_json()`` (checked against it by a test)."""
    placement = row.get("placement")
    return {
        "jobid": row["id"], "user": row["user"], "queue": row["queue"], "project": row["project"],
        "job_type": row["job_type"], "priority": row["priority"], "queue_time": row["submit_time"],
        "request": row["sched_request"], "tasks": row["tasks"], "state": row["state"],
        "placement": json.loads(placement) if placement else [],
        "start_time": row.get("start_time") or 0,
        **({"run_limit": row["run_limit"]} if row.get("run_limit") else {}),
    }


def _applied(ctl: Controller, conn: sa.engine.Connection, prepared: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The answers to submissions already applied under their keys (a client's retry after a
    failover), by position in ``prepared``: one query for a whole group, inside its transaction."""
    keyed = {(p["user"], p["key"]): i for i, p in enumerate(prepared) if p["key"] is not None}
    if not keyed:
        return {}
    hits = conn.execute(sa.select(submit_keys.c.user, submit_keys.c.key, submit_keys.c.jobid, submit_keys.c.count)
                        .where(sa.tuple_(submit_keys.c.user, submit_keys.c.key).in_(list(keyed)))).all()
    out = {}
    for hit in hits:
        row = ctl.job(hit.jobid)
        out[keyed[(hit.user, hit.key)]] = {
            "jobid": hit.jobid, "jobids": list(range(hit.jobid, hit.jobid + hit.count)), "count": hit.count,
            "array_id": row["array_id"], "queue": row["queue"], "user": hit.user, "state": PEND, "row": row,
            "duplicate": True}
    return out


def check_key(key: str | None) -> str | None:
    if key is not None and not _KEY.fullmatch(key):
        raise FieldErrors.one(["header", "Idempotency-Key"], "expected 1-128 letters, digits or . _ : -",
                              "value_error.idempotency_key")
    return key


def submit(ctl: Controller, user: str, req: SubmitRequest, key: str | None = None) -> dict[str, Any]:
    """Validate, then commit the job(s) and their JOBS_PUSH in one transaction.

    With ``key`` (the client's ``Idempotency-Key``), a second submission under the same key by the
    same user creates nothing and answers with the jobs of the first.
    """
    return commit(ctl, [prepare(ctl, user, req, key)])[0]


def prepare(ctl: Controller, user: str, req: SubmitRequest, key: str | None = None) -> dict[str, Any]:
    """Everything a submission writes, checked and with its job ids, before any transaction: a
    refusal (FieldErrors) happens here, so a group commit never holds a submission that fails."""
    from xce.controller import gates

    v = validate(ctl, req, user)
    spec = v["array"]
    indexes = spec.indexes if spec is not None else (None,)
    count = len(indexes)
    now = time.time_ns()
    first = ctl.alloc_jobids(count)
    base = {
        "user": user, "queue": v["queue"], "project": v["project"], "job_type": req.job_type,
        "priority": req.priority, "state": PEND, "tasks": req.tasks, "request": req.request,
        "sched_request": v["sched_request"], "command": dumps(req.command), "cwd": req.cwd,
        "env": dumps(req.env) if req.env else None,
        "requests": dumps(v["requests"]) if v["requests"] else None,
        "limits": dumps(v["limits"]) if v["limits"] else None, "run_limit": v["run_limit"],
        "array_id": first if spec is not None else None, "submit_time": now, "start_time": None, "end_time": None,
        "placement": None, "head_host": None, "pend_reasons": None, "pend_category": None, "reason": "submitted",
        "exit_code": None, "exit_signal": None, "usage": None, "rerunnable": bool(req.rerunnable),
        "name": req.name, "gate": None, "held_by": user if req.hold else None, "begin_time": req.begin_time,
        "depend": v["depend"], "array_limit": spec.limit if spec is not None else None,
    }
    gate = gates.base_gate(ctl, base, now)
    limit = base["array_limit"]
    templated = any(p and "%" in p for p in (req.stdout, req.stderr))
    rows = []
    for i, index in enumerate(indexes):
        jobid = first + i
        row = dict(base, id=jobid, array_index=index)
        if templated:
            row["stdout"] = _expand(req.stdout, first, index)
            row["stderr"] = _expand(req.stderr, first, index)
        else:
            row["stdout"], row["stderr"] = req.stdout, req.stderr
        held_back = gate if gate is not None else (gates.LIMIT if limit is not None and i >= limit else None)
        if held_back is not None:
            row["gate"], row["pend_category"] = held_back, held_back
            row["pend_reasons"] = dumps(gates.reasons(ctl, row, held_back))
        rows.append(row)
    return {"user": user, "queue": v["queue"], "array": spec is not None, "first": first, "count": count,
            "now": now, "rows": rows, "key": key}


def commit(ctl: Controller, prepared: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write prepared submissions in one transaction (one commit, one fsync on PostgreSQL), each
    with its own history rows and JOBS_PUSH events in submission order; the answer of each. One
    whose Idempotency-Key was already applied writes nothing and answers with the jobs of the first
    (the job ids it was given stay unused)."""
    with ctl.tx() as conn:
        done = _applied(ctl, conn, prepared)
        fresh = [p for i, p in enumerate(prepared) if i not in done]
        if fresh:
            conn.execute(jobs.insert(), [row for p in fresh for row in p["rows"]])
        for p in fresh:
            for row in p["rows"]:
                ctl.history(row["id"], None, PEND, "submitted", p["user"], p["now"])
            spec = jobspec_json(p["rows"][0])
            first, count = p["first"], p["count"]
            # A gated job (held, not before its begin time, beyond its array's limit) is not shown to
            # the scheduler until it is eligible (xce.controller.gates).
            ready = [r["id"] for r in p["rows"] if r["gate"] is None]
            for start in range(0, len(ready), JOBS_PER_PUSH):
                chunk = [dict(spec, jobid=i) for i in ready[start:start + JOBS_PER_PUSH]]
                ctl.publish("JOBS_PUSH", {"njobs": len(chunk), "jobs": chunk}, ts=p["now"])
            if p["key"] is not None:
                conn.execute(sa.insert(submit_keys).values(user=p["user"], key=p["key"], jobid=first, count=count,
                                                           ts=p["now"]))
    out = []
    for i, p in enumerate(prepared):
        if i in done:
            out.append(done[i])
            continue
        first, count, queue, user = p["first"], p["count"], p["queue"], p["user"]
        ctl.counts[(queue, PEND)] += count
        if log.isEnabledFor(logging.INFO):
            what = f"job {first}" if count == 1 else f"jobs {first}-{first + count - 1} (an array of {count})"
            log.info("%s submitted by %s to queue %s: PEND", what, user, queue,
                     extra={"fields": {"job": first, "count": count, "to": PEND, "user": user, "queue": queue}})
        if ctl.metrics is not None:
            ctl.metrics.submitted.labels(queue).inc(count)
        out.append({"jobid": first, "jobids": list(range(first, first + count)), "count": count,
                    "array_id": first if p["array"] else None, "queue": queue, "user": user,
                    "state": PEND, "row": p["rows"][0], "name": p["rows"][0]["name"],
                    "array_limit": p["rows"][0]["array_limit"],
                    "indexes": [r["array_index"] for r in p["rows"]] if p["array"] else None})
    return out
