"""The lazy host iterator (Req 3).

Built from one plan and the job's per-host capacity (how many of its tasks each host could
take now, zero where the select expression, the host's status or any resource rules it out),
it walks candidates in the request's order and yields ``(host, tasks)``: each host that can
take ``min(p, remaining)`` tasks gets that many, so exactly N tasks are placed.

Candidates are found with vector searches over the capacity column, so a plan costs a few
numpy operations plus one Python step per host actually used, not a loop over every host.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from xce.core.alloc.plans import Plan


def host_iter(plan: Plan, ntasks: int, capacity: np.ndarray, order: np.ndarray | None = None,
              cancelled=lambda: False) -> Iterator[tuple[int, int]]:
    """Yield ``(host_index, tasks)`` for ``plan`` until ``ntasks`` are placed or candidates run out.

    ``capacity[i]`` is in tasks; ``order`` is a permutation of host indexes (default: by name).
    ``cancelled()`` is checked before every candidate.
    """
    cap = capacity if order is None else capacity[order]
    p = plan.slots_per_host
    remaining = ntasks
    cursor = -1
    by_need: dict[int, np.ndarray] = {}
    while remaining > 0:
        if cancelled():
            return
        need = min(p, remaining)
        cands = by_need.get(need)
        if cands is None:
            cands = by_need[need] = np.flatnonzero(cap >= need)
        at = int(np.searchsorted(cands, cursor, side="right"))
        if at >= len(cands):
            return
        cursor = int(cands[at])
        host = cursor if order is None else int(order[cursor])
        remaining -= need
        yield host, need
