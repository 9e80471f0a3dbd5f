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

import logging
import re
import time
from typing import Any

import sqlalchemy as sa

from xce import formats
from xce.controller.errors import FieldErrors, field_error
from xce.controller.hosts.providers import SHIPPED_PROVIDERS
from xce.controller.jobs import depend, feasible, gates
from xce.controller.jobs.feasible import Capacity
from xce.controller.sched.wire import jobspec_json
from xce.controller.service import Controller, dumps
from xce.controller.store.schema import job_scripts, jobs, submit_keys
from xce.controller.web.models import MAX_COMMAND_BYTES, MAX_ENV_BYTES, SubmitRequest
from xce.core.specs import PEND
from xce.protocol.actions import ENFORCED_LIMITS
from xce.signals import parse_signal

#: Built-in names that describe a host, not something a job consumes or may be capped at.
NOT_REQUESTABLE = frozenset({"r15s", "r1m", "r15m", "ut", "type", "model", "gpu_model"})
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
            if not (kind == "limits" and name == "pids"):  # a cap on processes, not a resource anyone holds
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


def unenforced(ctl: Controller, limits: dict[str, int], errors: list[dict[str, Any]]) -> None:
    """A limit nothing enforces would be shown on the job and never kept: refuse it, naming what can
    be limited (the worker's own, and provider resources some registered worker enforces)."""
    can = set(ENFORCED_LIMITS).union(*(h.enforces for h in ctl.hosts.values()))
    for name in limits:
        if name not in can:
            errors.append(field_error(_loc("limits", name), f'a limit on "{name}" cannot be enforced: no worker can '
                                      f"cap it (expected one of: {', '.join(sorted(can))})",
                                      "value_error.limit", expected=sorted(can)))


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
    from xce.core.resources.naming import BUILTIN_RESOURCES

    cfg = ctl.config
    names = set(BUILTIN_RESOURCES) | {"hname"} | SHIPPED_PROVIDERS | set(cfg.shared_resources)
    names |= set(cfg.resource_names.values())
    for h in ctl.hosts.values():
        names.update(h.resources)
        names.update(h.load)
        names.update(h.features)  # LSF's boolean resources: select[bigmem]
    for traits in (*cfg.hosts.values(), *cfg.host_group_settings.values()):
        names.update(traits.features)
    return names, set(ctl.hosts) | set(cfg.hosts)


def unknown_names(ctl: Controller, parsed, loc: tuple[str | int, ...], errors: list[dict[str, Any]]) -> None:
    """A select/order name nobody defines would silently never match (or never order): refuse it,
    naming it, as LSF does; likewise a host name that ``hname ==`` asks for and no host has. A host
    that ``hname !=`` keeps out and that is not here is no error: every host here passes that test
    (sites list the nodes to avoid, and such a script runs unchanged elsewhere)."""
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
                for a, b in (pair, pair[::-1]) if node.op != "!=" else ():
                    if isinstance(a, Name) and a.name == "hname" and isinstance(b, Str) and b.value not in hosts:
                        errors.append(field_error(loc, f'unknown host "{b.value}" in select[] (expected one of: '
                                                  f"{', '.join(sorted(hosts)) or 'no host has registered yet'})",
                                                  "value_error.unknown_host", name=b.value))
                stack.extend(pair)
            elif isinstance(node, Unary):
                stack.append(node.operand)


def unknown_traits(ctl: Controller, parsed, errors: list[dict[str, Any]]) -> None:
    """``select[model == X]`` where no host has model X (``type``, ``gpu_model`` alike) could never match:
    refused, naming the values the hosts have, unless the job may pend forever (for a host to come)."""
    if not ctl.hosts:
        return  # a cluster still starting: nothing is judged (as for its slots, feasible.Capacity)
    for primary in parsed.primaries:
        for why in feasible.trait_problems(lambda trait: feasible.trait_values(ctl, trait), primary.select):
            errors.append(field_error(_loc("request"), f"{why}; the job can never run on this cluster "
                                      f"(--allow-pending-forever submits it anyway)", "value_error.never_runnable"))


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


def expand_hosts(ctl: Controller, field: str, names: list[str] | None,
                 errors: list[dict[str, Any]]) -> list[str] | None:
    """The hosts a job's host list names (``hosts``, ``exclude_hosts``): each entry a host, or a
    ``[host_groups]`` group standing for its members; in order, each once. None when not given.
    A name that is neither is refused, naming it, as ``bsub -m`` refuses an unknown host."""
    if names is None:
        return None
    groups = ctl.config.host_groups
    _, hosts = known_names(ctl)
    out: list[str] = []
    for i, name in enumerate(names):
        if name in groups:
            if name in hosts:
                errors.append(field_error(_loc(field, i), f'"{name}" is both a host and a host group: rename the '
                                          f"group in [host_groups]", "value_error.host_group", name=name))
                continue
            out.extend(m for m in groups[name] if m not in out)
        elif name in hosts:
            if name not in out:
                out.append(name)
        else:
            errors.append(field_error(_loc(field, i), f'unknown host or host group "{name}" (hosts: '
                                      f"{', '.join(sorted(hosts)) or 'none has registered yet'}; groups: "
                                      f"{', '.join(sorted(groups)) or 'none'})", "value_error.unknown_host",
                                      name=name))
    return out


def fold_placement(text: str, tasks: int, only: list[str] | None, never: list[str] | None, nodes: int | None,
                   cpus_per_task: int = 1) -> str | tuple[str, str]:
    """The scheduler-facing requirement with a host list and a host count folded in, or (field,
    why) when they cannot be expressed.

    ``hosts`` becomes ``hname == "a" || hname == "b"`` and ``exclude_hosts`` ``hname != "x" && ...``,
    AND-ed with the select of every primary of every alternative (a compound's parts all run on the
    listed hosts, as LSF applies -m to the whole job). ``nodes`` (``sbatch -N``) becomes
    ``span[hosts=N]``: exactly N hosts with ``ceil(tasks / N)`` tasks on each but the last, so only a
    simple requirement without a span of its own, and only an N that spread fills exactly (and that
    splits no task of ``cpus_per_task`` slots) can be expressed.
    """
    from dataclasses import replace

    from xce.core.resreq import Binary, parse_request
    from xce.core.resreq.ast import Compound, Request

    parsed = parse_request(text, tasks)
    terms = []
    if only:
        terms.append(" || ".join(f"hname == {_quoted(h)}" for h in only))
    if never:
        terms.append(" && ".join(f"hname != {_quoted(h)}" for h in never))
    limit = None
    for term in terms:
        expr = parse_request(f"select[{term}]", 1).primaries[0].select
        limit = expr if limit is None else Binary("&&", limit, expr)
    if nodes is not None:
        if parsed.kind != "PRIMARY":
            return ("nodes", "nodes applies to a simple requirement; with a compound or alternative request "
                    "write span[...] inside each {...}")
        p = parsed.primaries[0]
        if p.span_hosts is not None or p.span_ptile is not None:
            return ("nodes", f"nodes and the request's span[{p.span[0]}={p.span[1]}] both say how tasks are "
                    f"spread: give one of them")
        if nodes > tasks // cpus_per_task:
            return ("nodes", f"{nodes} hosts but only {tasks // cpus_per_task} task(s): every host needs one")
        per = -(-tasks // nodes)
        if -(-tasks // per) != nodes or per % cpus_per_task:
            fits = [k for k in range(1, tasks + 1) if -(-tasks // -(-tasks // k)) == k
                    and -(-tasks // k) % cpus_per_task == 0]
            return ("nodes", f"{tasks} slots cannot be spread over exactly {nodes} hosts ({per} on each but the "
                    f"last, whole tasks of {cpus_per_task} slot(s)); host counts that work: "
                    f"{', '.join(map(str, fits[:12]))}")
    alternatives = []
    for compound in parsed.alternatives:
        primaries = []
        for p in compound.primaries:
            if limit is not None:
                p = replace(p, select=limit if p.select is None else Binary("&&", p.select, limit))
            if nodes is not None:
                p = replace(p, span_hosts=nodes)
            primaries.append(p)
        alternatives.append(Compound(tuple(primaries)))
    return Request(tuple(alternatives)).format()


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


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

    if req.script is not None and "\0" in req.script:
        errors.append(field_error(_loc("script"), "the job script must not contain NUL characters (is it a "
                                  "binary file?)", "value_error.script"))
    if req.tasks % req.cpus_per_task:
        errors.append(field_error(_loc("cpus_per_task"), f"tasks ({req.tasks} slots) must be a multiple of "
                                  f"cpus_per_task ({req.cpus_per_task})", "value_error.cpus_per_task"))
    if (req.warn_signal is None) != (req.warn_time is None):
        errors.append(field_error(_loc("warn_signal" if req.warn_signal is None else "warn_time"),
                                  "give warn_signal and warn_time together", "value_error.warning"))
    elif req.warn_signal is not None and parse_signal(req.warn_signal) is None:
        errors.append(field_error(_loc("warn_signal"), f"unknown signal {req.warn_signal!r} (expected a name such "
                                  f"as USR1, SIGUSR2 or TERM, or a number)", "value_error.signal"))
    run_limit = resolve_run_limit(queue, qcfg, req.run_limit, errors)
    requests = _quantities("requests", req.requests, errors)
    limits = _quantities("limits", req.limits, errors)
    unenforced(ctl, limits, errors)
    parsed = _parse(req.request, req.tasks, _loc("request"), errors)
    if parsed is not None:
        unknown_names(ctl, parsed, _loc("request"), errors)
        if not req.allow_pending_forever:
            unknown_traits(ctl, parsed, errors)
    sched_request = req.request
    if parsed is not None and requests and not errors:
        folded = fold_requests(req.request, parsed, requests)
        if folded is None:
            errors.append(field_error(_loc("requests"), "requests can only be folded into a simple requirement; "
                                      "with a compound or alternative request write rusage[...] inside each {...}",
                                      "value_error.requests"))
        elif _parse(folded, req.tasks, _loc("requests"), errors) is not None:
            sched_request = folded
    only = expand_hosts(ctl, "hosts", req.hosts, errors)
    never = expand_hosts(ctl, "exclude_hosts", req.exclude_hosts, errors)
    if only is not None and never is not None and not errors and not set(only) - set(never):
        errors.append(field_error(_loc("exclude_hosts"), f"excludes every host the job may run on "
                                  f"({', '.join(only)})", "value_error.hosts"))
    if (only or never or req.nodes is not None) and parsed is not None and not errors:
        placed = fold_placement(sched_request, req.tasks, only, never, req.nodes, req.cpus_per_task)
        if isinstance(placed, tuple):
            errors.append(field_error(_loc(placed[0]), placed[1], "value_error." + placed[0]))
        elif _parse(placed, req.tasks, _loc("request"), errors) is not None:
            sched_request = placed
    if (req.constraint is not None or req.gpu_model is not None) and parsed is not None and not errors:
        traits = fold_traits(ctl, req, sched_request, errors)
        if traits is not None and _parse(traits, req.tasks, _loc("request"), errors) is not None:
            sched_request = traits
    array = _array(req.array, errors)
    if req.name is not None:
        from xce.jobref import RefError, check_name

        try:
            check_name(req.name)
        except RefError as exc:
            errors.append(field_error(_loc("name"), str(exc), "value_error.name"))
    expression = None
    if req.depend is not None:
        from types import SimpleNamespace

        try:  # jobs named by name are the submitter's own
            expression = depend.resolve(ctl, SimpleNamespace(name=user, is_admin=False), req.depend, array,
                                        req.name)
        except depend.DependError as exc:
            errors.append(field_error(_loc("depend"), str(exc), "value_error.depend", column=exc.column))
    if parsed is not None and not errors and not req.allow_pending_forever:
        why = Capacity.of(ctl).problem(sched_request, req.tasks)
        if why is not None:
            errors.append(never_runnable(why))
    if errors:
        raise FieldErrors(errors)
    return {"queue": queue, "project": project, "requests": requests, "limits": limits,
            "sched_request": sched_request, "run_limit": run_limit, "array": array, "depend": expression}


def never_runnable(why: str) -> dict[str, Any]:
    """The refusal of a job no host can ever run: Slurm's words first where they apply (sbatch prints
    "Batch job submission failed: " and then this), and how to submit it anyway. ``ctx.kind`` says
    which of Slurm's refusals it is (``feature``, ``gres``, ``node_configuration``), for a front-end
    that words it otherwise (bsub)."""
    kind = next((k for k, words in feasible.SLURM_KINDS.items() if why.startswith(words)), None)
    if kind is None:
        return field_error(_loc(), f"the job can never run on this cluster: {why}; --allow-pending-forever "
                           f"submits it anyway", "value_error.never_runnable")
    return field_error(_loc(), f"{why}; the job can never run on this cluster (--allow-pending-forever submits it "
                       f"anyway)", "value_error.never_runnable", kind=kind)


def fold_traits(ctl: Controller, req: SubmitRequest, text: str, errors: list[dict[str, Any]]) -> str | None:
    """The scheduler-facing requirement with the job's ``constraint`` (Slurm's grammar, as the features
    it names: ``a&b`` is ``select[a && b]``) and ``gpu_model`` (``select[gpu_model == X]``) folded into
    every primary's select; None, with a field error, when either cannot be honoured exactly or no
    host will ever satisfy it (unless the job may pend forever)."""
    from xce.core.features import ConstraintError, parse_constraint
    from xce.core.resreq import Binary, Name, Str, parse_request

    terms = []
    # A cluster still starting (no host registered) is not judged, as for its slots (feasible.Capacity).
    judge = bool(ctl.hosts) and not req.allow_pending_forever
    facts = feasible.host_facts(ctl)
    parsed = parse_request(text, req.tasks)
    if req.constraint is not None:
        try:
            constraint = parse_constraint(req.constraint)
        except ConstraintError as exc:
            errors.append(field_error(_loc(), str(exc), "value_error.constraint"))
            return None
        if constraint.counts:
            name, count = constraint.counts[0]
            errors.append(field_error(_loc(), f"{feasible.INVALID_FEATURE}: node counts ({name}*{count}: "
                                      f"at least {count} of the job's hosts with it) are not supported here; ask "
                                      f"for the feature on every host ({name}) or split the job", "value_error.constraint"))
            return None
        one_host = all(len(c.primaries) == 1 and (c.primaries[0].tasks <= 1 or c.primaries[0].span_hosts == 1)
                       for c in parsed.alternatives)
        if constraint.matching and not one_host:
            errors.append(field_error(_loc(), f"{feasible.INVALID_FEATURE}: [...] (all hosts the same "
                                      f"alternative) is supported only for a job on one host (-N 1); write the "
                                      f"alternatives with '|' to let each host match any of them",
                                      "value_error.constraint"))
            return None
        why = feasible.constraint_problem(facts, constraint, req.constraint) if judge else None
        if why is not None:
            errors.append(never_runnable(why))
            return None
        terms.append(constraint.expr)
    if req.gpu_model is not None:
        per_task = max((n for p in parsed.primaries for r, n in (*p.rusage, *p.rusage_host) if r == feasible.GPU),
                       default=0)
        why = feasible.gpu_model_problem(facts, req.gpu_model, per_task) if judge else None
        if why is not None:
            errors.append(never_runnable(why))
            return None
        terms.append(Binary("==", Name("gpu_model"), Str(req.gpu_model)))
    limit = terms[0]
    for term in terms[1:]:
        limit = Binary("&&", limit, term)
    return and_select(parsed, limit)


def and_select(parsed: Any, limit: Any) -> str:
    """``parsed`` as text with ``limit`` AND-ed into the select of every primary of every alternative (a
    compound's parts all run on hosts with the features, as a host list applies to the whole job)."""
    from dataclasses import replace

    from xce.core.resreq import Binary
    from xce.core.resreq.ast import Compound, Request

    return Request(tuple(Compound(tuple(replace(p, select=limit if p.select is None else Binary("&&", p.select, limit))
                                        for p in c.primaries)) for c in parsed.alternatives)).format()


#: SubmitRequest fields kept in a job's ``options`` (JSON), with the value that is not stored.
OPTION_DEFAULTS: dict[str, Any] = {
    "cpus_per_task": 1, "hosts": None, "exclude_hosts": None, "nodes": None, "warn_signal": None, "warn_time": None,
    "warn_batch_only": False, "open_mode": "append", "interactive": False, "submit_host": None, "submit_dir": None,
    "recorded": {}, "constraint": None, "gpu_model": None}


def job_options(req: SubmitRequest, array=None) -> dict[str, Any]:
    """The options that differ from their defaults: what the worker and the views read (a signal
    by its name, ``SIGUSR2``, however it was written), and an array's lowest and highest index and
    its size as submitted ($SLURM_ARRAY_TASK_MIN, _MAX, _COUNT, whichever elements remain)."""
    out: dict[str, Any] = {}
    if array is not None:
        out["array"] = [min(array.indexes), max(array.indexes), len(array.indexes)]
    for name, default in OPTION_DEFAULTS.items():
        value = getattr(req, name)
        if value != default:
            out[name] = value
    if req.warn_signal is not None and (sig := parse_signal(req.warn_signal)) is not None:
        out["warn_signal"] = sig.name
    return out


def resolve_run_limit(queue: str, qcfg: Any, asked: int | None, errors: list[dict[str, Any]]) -> int | None:
    """The job's run limit in seconds: what it asked for, else the queue's default, else its maximum
    (as Slurm gives a job without ``--time`` its partition's DefaultTime, else MaxTime)."""
    if qcfg is None:
        return asked
    most = qcfg.max_run_limit * 60 if qcfg.max_run_limit is not None else None
    if asked is None:
        return qcfg.run_limit * 60 if qcfg.run_limit is not None else most
    if most is not None and asked > most:
        errors.append(field_error(_loc("run_limit"), f"run limit {formats.hms(asked)} is longer than queue {queue!r} allows (max_run_limit = {qcfg.max_run_limit} min)",
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


def _expand(path: str | None, row: dict[str, Any], command: list[str]) -> str | None:
    """What the controller knows of an output file pattern (:mod:`xce.jobfiles`), so that ``xce jobs``
    shows the name; the worker adds the host and the ranks."""
    if path is None:
        return None
    from xce.jobfiles import expand, values

    return expand(path, values(jobid=row["id"], array_id=row["array_id"], index=row["array_index"],
                               name=row["name"], command=command, user=row["user"]), final=False)


def _claim_keys(ctl: Controller, conn: sa.engine.Connection,
                prepared: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Record the Idempotency-Keys of a group, inside its transaction, and answer those already applied
    (a client's retry after a failover) with their first submission's jobs, by position in ``prepared``.

    One statement for the whole group, which claims every key not yet taken and says which it took
    (``ON CONFLICT DO NOTHING RETURNING``, PostgreSQL and SQLite alike): on PostgreSQL one round trip
    where a lookup and then an insert took two, while the whole event loop waits for this commit.
    Only keys taken before are looked up, which happens only for retries."""
    keyed = {(p["user"], p["key"]): i for i, p in enumerate(prepared) if p["key"] is not None}
    if not keyed:
        return {}
    claim = _upsert(conn.dialect.name)(submit_keys).on_conflict_do_nothing()
    claimed = conn.execute(claim.returning(submit_keys.c.user, submit_keys.c.key), [
        {"user": user, "key": key, "jobid": prepared[i]["first"], "count": prepared[i]["count"],
         "ts": prepared[i]["now"]} for (user, key), i in keyed.items()]).all()
    taken = keyed.keys() - {(row.user, row.key) for row in claimed}
    if not taken:
        return {}
    hits = conn.execute(sa.select(submit_keys.c.user, submit_keys.c.key, submit_keys.c.jobid, submit_keys.c.count)
                        .where(sa.tuple_(submit_keys.c.user, submit_keys.c.key).in_(list(taken)))).all()
    out = {}
    for hit in hits:
        row = ctl.job(hit.jobid)
        out[keyed[(hit.user, hit.key)]] = {
            "jobid": hit.jobid, "jobids": list(range(hit.jobid, hit.jobid + hit.count)), "count": hit.count,
            "array_id": row["array_id"], "queue": row["queue"], "user": hit.user, "state": PEND, "row": row,
            "duplicate": True}
    return out


def _upsert(dialect: str) -> Any:
    """The dialect's INSERT with ``on_conflict_do_nothing`` (both stores have one)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


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
        "script_id": first if req.script is not None else None, "exclusive": req.exclusive,
        "options": dumps(options) if (options := job_options(req, spec)) else None,
    }
    gate = gates.base_gate(ctl, base, now)
    limit = base["array_limit"]
    templated = any(p and "%" in p for p in (req.stdout, req.stderr))
    rows = []
    for i, index in enumerate(indexes):
        jobid = first + i
        row = dict(base, id=jobid, array_index=index)
        if templated:
            row["stdout"] = _expand(req.stdout, row, req.command)
            row["stderr"] = _expand(req.stderr, row, req.command)
        else:
            row["stdout"], row["stderr"] = req.stdout, req.stderr
        held_back = gate if gate is not None else (gates.LIMIT if limit is not None and i >= limit else None)
        if held_back is not None:
            row["gate"], row["pend_category"] = held_back, held_back
            row["pend_reasons"] = dumps(gates.reasons(ctl, row, held_back))
        rows.append(row)
    return {"user": user, "queue": v["queue"], "array": spec is not None, "first": first, "count": count,
            "now": now, "rows": rows, "key": key, "script": req.script}


def commit(ctl: Controller, prepared: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write prepared submissions in one transaction (one commit, one fsync on PostgreSQL), each
    with its own history rows and JOBS_PUSH events in submission order; the answer of each. One
    whose Idempotency-Key was already applied writes nothing and answers with the jobs of the first
    (the job ids it was given stay unused)."""
    with ctl.tx() as conn:
        done = _claim_keys(ctl, conn, prepared)
        fresh = [p for i, p in enumerate(prepared) if i not in done]
        if fresh:
            conn.execute(jobs.insert(), [row for p in fresh for row in p["rows"]])
            scripts = [{"id": p["first"], "user": p["user"], "script": p["script"]} for p in fresh
                       if p["script"] is not None]
            if scripts:
                conn.execute(job_scripts.insert(), scripts)
        for p in fresh:
            for row in p["rows"]:
                ctl.history(row["id"], None, PEND, "submitted", p["user"], p["now"])
            spec = jobspec_json(p["rows"][0])
            # A gated job (held, not before its begin time, beyond its array's limit) is not shown to
            # the scheduler until it is eligible (xce.controller.jobs.gates).
            ctl.publish_jobs([dict(spec, jobid=r["id"]) for r in p["rows"] if r["gate"] is None], p["now"])
    out = []
    for i, p in enumerate(prepared):
        if i in done:
            out.append(done[i])
            continue
        first, count, queue, user = p["first"], p["count"], p["queue"], p["user"]
        ctl.counts.added(queue, PEND, count)
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
