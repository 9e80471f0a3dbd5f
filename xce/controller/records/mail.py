"""The mail a job's move raises, as the controller's move observer sees it.

The rules and the words are :mod:`xce.mail.messages`' (pure); what needs the store is here: an array
element asking Slurm's mail for its whole array (no ARRAY_TASKS) is mailed only as the array's first
element to start or its last to end, which only the other elements' rows can tell. The read runs
inside the moving transaction, so the elements moved earlier in it count (an array ended in one
commit gets its one summary); it runs only when the element's move would otherwise be mailed.
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
        others = conn.execute(sa.select(jobs.c.state, jobs.c.end_code, jobs.c.exit_code).where(
            jobs.c.array_id == job["array_id"], jobs.c.id != job["id"])).all()
        first = all(state == PEND for state, _c, _e in others)
        last = not any(state in UNFINISHED for state, _c, _e in others)
        if last:
            rows = [*({"state": s, "end_code": c, "exit_code": e} for s, c, e in others), job]
            summary = {"states": [messages.slurm_state(r) for r in rows],
                       "exit_codes": [r.get("exit_code") or 0 for r in rows]}
    return messages.of_move(job, verb, new, a, cluster=cfg.cluster_name, domain=cfg.mail.domain,
                            first=first, last=last, summary=summary)
