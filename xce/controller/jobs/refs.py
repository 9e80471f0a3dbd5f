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
    try:
        ref = parse_ref(text)
    except RefError as exc:
        raise FieldErrors.one(["body", "jobs"], str(exc), "value_error.job") from None
    with ctl._begin():
        if ref.id is not None:  # an array's id names all its elements; any other id, its own row
            rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.array_id == ref.id)
                                                      .order_by(jobs.c.id)).mappings()]
            if not rows:
                rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.id == ref.id)).mappings()]
        else:
            rows = [dict(r) for r in ctl.conn.execute(sa.select(jobs).where(jobs.c.user == p.name,
                                                                            jobs.c.name == ref.name)
                                                      .order_by(jobs.c.id)).mappings()]
    if not rows:
        raise NotFound(f"job {ref.id} does not exist" if ref.id is not None
                       else f"no job of yours is named {ref.name!r}")
    if ref.name is not None:
        groups: dict[int, list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault(r["array_id"] or r["id"], []).append(r)
        if len(groups) > 1:  # the unfinished ones, when that decides it
            live = {k: g for k, g in groups.items() if any(r["state"] not in ("DONE", "EXIT") for r in g)}
            groups = live if len(live) == 1 else groups
        if len(groups) > 1:
            raise Conflict(f"job name {ref.name!r} is ambiguous: it names jobs {', '.join(map(str, sorted(groups)))} "
                           f"(give a job id)")
        rows = next(iter(groups.values()))
    if ref.indexes is not None:
        if rows[0]["array_id"] is None:
            raise Conflict(f"job {text}: job {rows[0]['id']} is not an array")
        wanted = set(ref.indexes)
        rows = [r for r in rows if r["array_index"] in wanted]
        missing = wanted - {r["array_index"] for r in rows}
        if missing and (not rows or len(wanted) == 1):  # a range names the elements it holds
            head = ref.id if ref.id is not None else rows[0]["array_id"] if rows else ref.name
            raise NotFound(f"job {head}[{format_indexes(sorted(missing))}] does not exist")
    return rows
