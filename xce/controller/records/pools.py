"""Who holds the cluster's shared pools (licenses) and who waits for them: LSF's ``blimits``
for ``[shared_resources]``.

The scheduler keeps each pool's tally inside its core, a separate process, so the controller
derives the same figures from its own job records, as the core charges them: a job holds
``tasks x amount`` of every pool its requirement's ``rusage[]`` names, from its dispatch until it
ends or goes back to PEND, suspended or not (suspension gives back slots only). A job whose
requirement has alternatives (``{...} || {...}``) is counted by its first one, which is what a
restarted scheduler charges it too (the controller does not learn which alternative placed it).
Pending jobs are the demand: what they would take once dispatched.

Read-only: nothing here changes what the scheduler charges.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from xce.controller.hosts.slots import HOLDING
from xce.controller.service import Controller
from xce.controller.store.schema import jobs


def pool_amounts(request_text: str, tasks: int, pools: set[str]) -> dict[str, int]:
    """What one job of this requirement takes of each pool, as the core charges it."""
    from xce.core.resreq import RequestSyntaxError, parse_request

    try:
        parsed = parse_request(request_text, tasks)
    except (RequestSyntaxError, ValueError, TypeError):
        return {}  # a requirement the scheduler cannot read takes nothing
    out: dict[str, int] = {}
    for primary in parsed.alternatives[0].primaries:
        for name, amount in primary.rusage:
            if name in pools and amount > 0:
                out[name] = out.get(name, 0) + primary.tasks * amount
    return out


def pools_view(ctl: Controller) -> dict[str, Any]:
    configured = ctl.config.shared_resources
    names = sorted(configured)
    view: dict[str, dict[str, Any]] = {
        n: {"name": n, "total": configured[n].total, "description": configured[n].description, "in_use": 0,
            "free": configured[n].total, "pending": 0, "holders": [], "users": {}, "waiting": {}} for n in names}
    if names:
        # Only jobs whose requirement names a pool: a store of 100,000 jobs is not read whole.
        q = (sa.select(jobs.c.id, jobs.c.user, jobs.c.queue, jobs.c.state, jobs.c.tasks, jobs.c.sched_request)
             .where(jobs.c.state.in_((*HOLDING, "PEND")), sa.or_(*[jobs.c.sched_request.contains(n) for n in names]))
             .order_by(jobs.c.id))
        with ctl.tx() as conn:
            rows = conn.execute(q).mappings().all()
        pools = set(names)
        for row in rows:
            for name, amount in pool_amounts(row["sched_request"], row["tasks"], pools).items():
                pool = view[name]
                if row["state"] == "PEND":
                    pool["pending"] += amount
                    pool["waiting"][row["user"]] = pool["waiting"].get(row["user"], 0) + amount
                else:
                    pool["in_use"] += amount
                    pool["users"][row["user"]] = pool["users"].get(row["user"], 0) + amount
                    pool["holders"].append({"jobid": row["id"], "user": row["user"], "queue": row["queue"],
                                            "state": row["state"], "amount": amount})
    for pool in view.values():
        pool["free"] = pool["total"] - pool["in_use"]  # below zero when the pool was shrunk under its holders
        pool["users"] = [{"user": u, "amount": a} for u, a in sorted(pool["users"].items())]
        pool["waiting"] = [{"user": u, "amount": a} for u, a in sorted(pool["waiting"].items())]
    return {"pools": list(view.values())}
