"""The lazy host walk (Req 3).

Built from one plan and the job's per-host capacity (how many of its tasks each host could
take now, zero where the select expression, the host's status or any resource rules it out),
it walks candidates in the request's order and lists ``(host, tasks)``: each host that can
take ``min(p, remaining)`` tasks gets that many, so exactly N tasks are placed.

Candidates are found with vector searches over the capacity column, so a plan costs a few
numpy operations plus one Python step per host actually used, not a loop over every host.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from xce.core.alloc.plans import Plan


def host_iter(plan: Plan, ntasks: int, capacity: np.ndarray, order: np.ndarray | None = None,
              cancelled=lambda: False) -> list[tuple[int, int]]:
    """``(host_index, tasks)`` for ``plan`` until ``ntasks`` are placed or candidates run out.

    ``capacity[i]`` is in tasks; ``order`` is a permutation of host indexes (default: by name).
    ``cancelled()`` is checked before the walk: nothing in it can cancel, and a caller checks again
    after it (a session cancelled meanwhile rolls back what it placed).

    The single pass gives each host ``min(p, remaining)``: while at least p tasks remain only hosts
    that can take p qualify, so the first ``N // p`` such hosts take p each, and the remainder
    ``N % p`` goes to the first later host that can take it. That is the same walk, found with
    two vector searches, and the hosts it takes listed at once, not with a Python step per host.
    """
    if cancelled():
        return []
    cap = capacity if order is None else capacity[order]
    p = plan.slots_per_host
    if plan.fill:
        return _fill(p, ntasks, cap, order)
    full, rest = divmod(ntasks, p)
    last = -1
    placed: list[tuple[int, int]] = []
    if full:
        fits = cap >= p
        if full == 1:
            first = int(fits.argmax())
            chosen = np.array([first] if fits[first] else [], dtype=np.int64)
        else:
            chosen = np.flatnonzero(fits)[:full]
        hosts = chosen if order is None else order[chosen]
        placed = list(zip(hosts.tolist(), repeat(p, len(chosen)), strict=True))
        if len(chosen) < full:
            return placed
        last = int(chosen[-1])
    if rest:
        tail = cap[last + 1:] >= rest
        at = int(tail.argmax()) if len(tail) else 0
        if not len(tail) or not tail[at]:
            return placed
        pos = last + 1 + at
        placed.append(((pos if order is None else int(order[pos])), rest))
    return placed


def _fill(p: int, ntasks: int, cap: np.ndarray, order: np.ndarray | None) -> list[tuple[int, int]]:
    """The fill plan's walk: each candidate in order takes ``min(capacity, p, remaining)``.

    The running total of the capped capacities says where N is reached, so only the hosts used
    are listed. Short of N it gives what it found, and the caller sees too few tasks.
    """
    take = np.minimum(cap, p)
    np.maximum(take, 0, out=take)
    upto = np.cumsum(take)
    end = int(np.searchsorted(upto, ntasks)) + 1  # hosts up to and including the one reaching N
    chosen = np.flatnonzero(take[:end])
    tasks = take[chosen]
    if len(chosen) and int(upto[chosen[-1]]) > ntasks:  # the last host takes only what remains
        tasks[-1] -= int(upto[chosen[-1]]) - ntasks
    hosts = chosen if order is None else order[chosen]
    return list(zip(hosts.tolist(), tasks.tolist(), strict=True))
