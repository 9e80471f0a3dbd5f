"""``core.validate()``: the invariants a test can check after every event (DESIGN.md).

In-use equals its re-derivation from the jobs' own records; no host holds more tasks than slots;
no job is both pending and placed; every running job holds its slots; queue counters match; no
host where an exclusive job holds slots has another job holding slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xce.core.specs import PEND, RUN

if TYPE_CHECKING:
    from xce.core.core import SchedulerCore


def validate(core: "SchedulerCore") -> None:
    cluster = core.cluster
    before = {res: cluster.inuse(res).copy() for res in list(cluster._inuse)}
    pools_before = {r: p.inuse for r, p in cluster.pools.items()}
    cluster.rederive()
    for res in list(cluster._inuse):
        col = cluster.inuse(res)
        old = before.get(res, np.zeros_like(col))
        if not np.array_equal(old, col):
            raise AssertionError(f"in-use of {res} drifted from its re-derivation: {old.tolist()} != {col.tolist()}")
    for r, p in cluster.pools.items():
        if pools_before.get(r, 0) != p.inuse:
            raise AssertionError(f"pool {r} in-use {pools_before.get(r)} != re-derived {p.inuse}")
    free = cluster.available("slots")
    if (free < 0).any():
        raise AssertionError(f"a host has more tasks than slots: free={free.tolist()}")
    pending: dict[str, int] = {}
    for job in core.jobs.values():
        if job.state == PEND:
            pending[job.queue] = pending.get(job.queue, 0) + 1
            if job.placement or job.slots_charged:
                raise AssertionError(f"job {job.jobid} is pending but holds a placement")
        if job.state == RUN and not job.slots_charged:
            raise AssertionError(f"job {job.jobid} runs without holding slots")
        if job.exclusive and job.slots_charged:
            for name, _ in job.placement:
                i = cluster.index.get(name)
                others = [j for j, on in cluster.held.items()
                          if i in on and j != job.jobid and core.jobs[j].slots_charged]
                if others:
                    raise AssertionError(f"exclusive job {job.jobid} shares host {name} with job(s) {others}")
    for queue in core.queues.values():
        if pending.get(queue.name, 0) != queue.pending:
            raise AssertionError(f"queue {queue.name} counts {queue.pending} pending jobs, has {pending.get(queue.name, 0)}")
