"""Jobs named as people write them (``12``, ``12[3]``, ``12[1-5]``, ``NAME``), resolved to their rows.

Kill, suspend and the rest (:mod:`xce.controller.jobs.control`), dependencies
(:mod:`xce.controller.jobs.depend`) and the job listing all name jobs this way, and must agree on
what a name means: an array's id names all its elements, a name the caller's own job or array.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, FieldErrors, NotFound
from xce.controller.service import Controller
from xce.controller.store.schema import jobs
from xce.jobref import RefError, format_indexes, parse_ref


def resolve(ctl: Controller, p: Principal, text: str) -> list[dict[str, Any]]:
    """The jobs ``text`` (``12``, ``12[3]``, ``12[1-5]``, ``NAME``) names, in id order; NotFound or
    Conflict (an ambiguous name) with a sentence otherwise."""
    return [r for g in groups(ctl, p, text, names="one") for r in g]


def groups(ctl: Controller, p: Principal, text: str, names: str = "one") -> list[list[dict[str, Any]]]:
    """The jobs ``text`` names, one list per job or array, in id order. A name naming several jobs is
    resolved by ``names``: ``one`` refuses it unless one of them is unfinished (commands act on one
    job); ``all`` keeps them all and ``last`` the one submitted last, as LSF's dependencies do (with
    ``JOB_DEP_LAST_SUB``); with ``all`` or ``last`` a trailing ``*`` names every job whose name begins
    with what precedes it (``-w 'done(prep*)'``)."""
    try:
        ref = parse_ref(text)
    except RefError as exc:
        raise FieldErrors.one(["body", "jobs"], str(exc), "value_error.job") from None
    wildcard = names != "one" and ref.name is not None and ref.name.endswith("*")
    with ctl._begin():
        if ref.id is not None:  # an array's id names all its elements; any other id, its own row
            rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.array_id == ref.id)
                                                      .order_by(jobs.c.id)).mappings()]
            if not rows:
                rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.id == ref.id)).mappings()]
        else:
            named = (jobs.c.name.startswith(ref.name[:-1], autoescape=True) if wildcard
                     else jobs.c.name == ref.name)
            rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.user == p.name, named)
                                                      .order_by(jobs.c.id)).mappings()]
    if not rows:
        raise NotFound(f"job {ref.id} does not exist" if ref.id is not None
                       else f"no job of yours has a name beginning {ref.name[:-1]!r}" if wildcard
                       else f"no job of yours is named {ref.name!r}")
    by_job: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_job.setdefault(r["array_id"] or r["id"], []).append(r)
    if ref.name is not None and len(by_job) > 1 and names == "last":
        by_job = {max(by_job): by_job[max(by_job)]}
    if ref.name is not None and len(by_job) > 1 and names == "one":
        live = {k: g for k, g in by_job.items() if any(r["state"] not in ("DONE", "EXIT") for r in g)}
        by_job = live if len(live) == 1 else by_job  # the unfinished one, when that decides it
        if len(by_job) > 1:
            raise Conflict(f"job name {ref.name!r} is ambiguous: it names jobs {', '.join(map(str, sorted(by_job)))} "
                           f"(give a job id)")
    out = []
    for first, group in sorted(by_job.items()):
        if ref.indexes is not None:
            if group[0]["array_id"] is None:
                raise Conflict(f"job {text}: job {first} is not an array")
            wanted = set(ref.indexes)
            group = [r for r in group if r["array_index"] in wanted]
            missing = wanted - {r["array_index"] for r in group}
            if missing and (not group or len(wanted) == 1):  # a range names the elements it holds
                head = ref.id if ref.id is not None else group[0]["array_id"] if group else ref.name
                raise NotFound(f"job {head}[{format_indexes(sorted(missing))}] does not exist")
        out.append(group)
    return out
