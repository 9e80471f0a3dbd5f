"""A queue's fair-share standing (LSF's ``bhpart``, Slurm's ``sshare``): each user's (or
project's) shares, decayed usage, factor and rank, as the ``fairshare`` picker
(:mod:`xce.core.pickers.fairshare`) orders them.

The picker lives in the scheduler process and does not publish its tally, so the controller
recomputes it from its own records, with the picker's own definitions:

* usage is slot-seconds while the job is RUN (not suspended, not pending), a job holding its
  tasks' slots, an exclusive job its hosts' every slot, charged to ``(queue, user or project)``
  per the queue's ``fairshare_by``;
* decayed with the queue's ``fairshare_half_life`` H: a slot-second used at time t counts
  ``2 ** (-(now - t) / H)``. So a job of n slots that ran from a to b contributes
  ``n * H / ln 2 * (2 ** (-(now - b) / H) - 2 ** (-(now - a) / H))``. The picker adds each
  round's slot-seconds at the end of the round and decays the sum between rounds, a Riemann sum
  of this integral: the two differ by less than a factor ``2 ** (round / H)`` (a second's round
  against a week's half-life: about one part in a million);
* the factor is ``2 ** (-U / S)`` with U the owner's part of the queue's usage and S its part of
  the shares of the owners with usage, itself and those listed in ``shares`` (1 when unlisted),
  exactly :meth:`FairsharePicker.factor`; 1.0 while nobody has used anything.

One difference is by design: the picker's tally is not kept across a restart of the scheduler
(it counts its running jobs from their start again, and forgets those that ended before), while
this view counts every run the controller has recorded. It shows the standing a scheduler that
never restarted would use. ``tests/controller/test_controller_views.py`` checks the view against
the picker itself over one history.
"""

from __future__ import annotations

import json
import math
from typing import Any

import sqlalchemy as sa

from xce.controller.service import Controller
from xce.controller.store.schema import job_history, jobs

NS = 1_000_000_000
#: Runs that ended this many half-lives ago count less than 2**-64 of themselves: not read.
HORIZON_HALF_LIVES = 64


def decayed(slots: int, start_ns: int, end_ns: int, now_ns: int, half_life_s: int) -> float:
    """Slot-seconds of ``slots`` used from ``start_ns`` to ``end_ns``, decayed to ``now_ns``."""
    if end_ns <= start_ns:
        return 0.0
    h = half_life_s * NS
    tail = 2.0 ** (-max(0, now_ns - end_ns) / h)
    # expm1 keeps a short run under a long half-life exact (1 - 2**-x for a tiny x).
    return slots * half_life_s / math.log(2) * tail * -math.expm1(-(end_ns - start_ns) / h * math.log(2))


def factor(usage: dict[str, float], shares: dict[str, int], owner: str) -> float:
    """The fairshare picker's factor of ``owner`` (see :meth:`FairsharePicker.factor`)."""
    total_usage = sum(usage.values())
    owners = set(usage) | {owner} | set(shares)
    total_shares = sum(shares.get(o, 1) for o in owners)
    if total_usage <= 0 or total_shares <= 0:
        return 1.0
    u = usage.get(owner, 0.0) / total_usage
    s = shares.get(owner, 1) / total_shares
    return 2.0 ** (-u / s) if s > 0 else 0.0


def picker_of(ctl: Controller, queue: str) -> str:
    return ctl.config.queues[queue].job_pick_plugin or ctl.config.scheduler.job_pick_plugin


def _held_slots(ctl: Controller, row: dict[str, Any]) -> int:
    """Slots the job holds while it runs: an exclusive one every slot of its hosts, as the core charges."""
    if not row["exclusive"] or not row["placement"]:
        return int(row["tasks"])
    total = 0
    for host, n in json.loads(row["placement"]):
        live = ctl.hosts.get(host)
        slots = ctl.host_values(live).get("slots", n) if live is not None else n
        total += max(int(n), int(slots) if isinstance(slots, (int, float)) else int(n))
    return total


def usage_of(ctl: Controller, queue: str, now_ns: int) -> dict[str, float]:
    """Decayed slot-seconds per owner in ``queue`` at ``now_ns``, from the jobs' recorded runs."""
    spec = ctl.config.queues[queue]
    by_project = spec.fairshare_by == "project"
    half_life = spec.fairshare_half_life
    horizon = max(0, now_ns - HORIZON_HALF_LIVES * half_life * NS)  # a 64-bit column: never below the epoch
    q = (sa.select(job_history.c.jobid, job_history.c.ts, job_history.c.from_state, job_history.c.to_state,
                   jobs.c.user, jobs.c.project, jobs.c.tasks, jobs.c.exclusive, jobs.c.placement)
         .join(jobs, jobs.c.id == job_history.c.jobid)
         .where(jobs.c.queue == queue, sa.or_(jobs.c.end_time.is_(None), jobs.c.end_time >= horizon),
                sa.or_(job_history.c.to_state == "RUN", job_history.c.from_state == "RUN"))
         .order_by(job_history.c.jobid, job_history.c.id))
    with ctl.tx() as conn:
        rows = conn.execute(q).mappings().all()
    usage: dict[str, float] = {}
    opened: dict[int, int] = {}
    last: dict[int, dict[str, Any]] = {}
    for row in rows:
        jobid = row["jobid"]
        last[jobid] = row
        if row["to_state"] == "RUN":
            opened.setdefault(jobid, row["ts"])
        elif row["from_state"] == "RUN" and jobid in opened:
            owner = row["project"] if by_project else row["user"]
            usage[owner] = usage.get(owner, 0.0) + decayed(_held_slots(ctl, row), opened.pop(jobid), row["ts"],
                                                           now_ns, half_life)
    for jobid, since in opened.items():  # running now
        row = last[jobid]
        owner = row["project"] if by_project else row["user"]
        usage[owner] = usage.get(owner, 0.0) + decayed(_held_slots(ctl, row), since, now_ns, now_ns, half_life)
    return usage


def shares_view(ctl: Controller, queue: str, now_ns: int) -> dict[str, Any]:
    """The queue's owners, best placed first; ``queue`` must use the fairshare picker."""
    spec = ctl.config.queues[queue]
    shares = dict(spec.shares)
    usage = usage_of(ctl, queue, now_ns)
    column = jobs.c.project if spec.fairshare_by == "project" else jobs.c.user
    with ctl.tx() as conn:
        counts = conn.execute(sa.select(column, jobs.c.state, sa.func.count()).where(
            jobs.c.queue == queue, jobs.c.state.in_(("PEND", "RUN"))).group_by(column, jobs.c.state)).all()
    jobs_of: dict[str, dict[str, int]] = {}
    for owner, state, n in counts:
        jobs_of.setdefault(owner, {"PEND": 0, "RUN": 0})[state] = n
    total_usage = sum(usage.values())
    rows = []
    for owner in sorted(set(shares) | set(usage) | set(jobs_of)):
        owners = set(usage) | {owner} | set(shares)
        total_shares = sum(shares.get(o, 1) for o in owners)
        mine = usage.get(owner, 0.0)
        rows.append({"name": owner, "shares": shares.get(owner, 1),
                     "share": shares.get(owner, 1) / total_shares if total_shares else 0.0,
                     "usage": mine, "usage_share": mine / total_usage if total_usage > 0 else 0.0,
                     "factor": factor(usage, shares, owner),
                     "pending": jobs_of.get(owner, {}).get("PEND", 0), "running": jobs_of.get(owner, {}).get("RUN", 0)})
    rows.sort(key=lambda r: (-r["factor"], r["name"]))
    for i, r in enumerate(rows):  # equal factors share a rank
        r["rank"] = rows[i - 1]["rank"] if i and r["factor"] == rows[i - 1]["factor"] else i + 1
    return {"queue": queue, "by": spec.fairshare_by, "half_life": spec.fairshare_half_life, "at": now_ns,
            "usage": total_usage, "owners": rows}
