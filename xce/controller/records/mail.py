"""The mail a job's move raises, as the controller's move observer sees it.

The rules and the words are :mod:`xce.mail.messages`' (pure); what needs the store is here: an array
element asking Slurm's mail for its whole array (no ARRAY_TASKS) is mailed only as the array's first
element to start or its last to end, which only the other elements' rows can tell. The read runs
inside the moving transaction, so the elements moved earlier in it count (an array ended in one
commit gets its one summary); it runs only when the element's move would otherwise be mailed, and
it looks for one other element (from the end where one is likeliest found, since elements start
and end roughly in index order), so an array of 100,000 elements is not read whole at every end:
only its last end reads it all, for the summary's states and exit codes.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from xce.config.schema import ClusterConfig
from xce.controller.jobs.states import PEND, UNFINISHED
from xce.controller.store.schema import jobs
from xce.mail import messages
from xce.mail.asked import SLURM, asked

__all__ = ["of_move"]


def of_move(conn: sa.engine.Connection, job: dict[str, Any], verb: str, new: str,
            cfg: ClusterConfig) -> list[messages.Mail]:
    opts = job.get("options")
    a = asked((json.loads(opts) if isinstance(opts, str) else opts or {}).get("recorded"))
    if a is None or not messages.occasions(a, verb, new, job):
        return []
    first = last = True
    summary = None
    if job.get("array_id") is not None and a.family == SLURM and "ARRAY_TASKS" not in a.types:
        others = sa.and_(jobs.c.array_id == job["array_id"], jobs.c.id != job["id"])
        if verb == "dispatch":
            # Elements start in index order: the lowest ids are the first to have left PEND.
            first = conn.execute(sa.select(jobs.c.id).where(others, jobs.c.state != PEND)
                                 .order_by(jobs.c.id).limit(1)).first() is None
        else:
            # ... and end in that order: the highest ids are the last to be unfinished.
            last = conn.execute(sa.select(jobs.c.id).where(others, jobs.c.state.in_(UNFINISHED))
                                .order_by(jobs.c.id.desc()).limit(1)).first() is None
        if last and verb != "dispatch":  # the whole array is read once, for its summary
            rows = [*(dict(r) for r in conn.execute(sa.select(jobs.c.state, jobs.c.end_code, jobs.c.exit_code)
                                                     .where(others)).mappings()), job]
            summary = {"states": [messages.slurm_state(r) for r in rows],
                       "exit_codes": [r.get("exit_code") or 0 for r in rows]}
    return messages.of_move(job, verb, new, a, cluster=cfg.cluster_name, domain=cfg.mail.domain,
                            first=first, last=last, summary=summary)
