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

    The single pass gives each host ``min(p, remaining)``: while at least p tasks remain only hosts
    that can take p qualify, so the first ``N // p`` such hosts take p each, and the remainder
    ``N % p`` goes to the first later host that can take it. That is the same walk, found with
    two vector searches instead of a Python step per host.
    """
    cap = capacity if order is None else capacity[order]
    p = plan.slots_per_host
    if plan.fill:
        yield from _fill(p, ntasks, cap, order, cancelled)
        return
    full, rest = divmod(ntasks, p)
    last = -1
    if full:
        fits = cap >= p
        if full == 1:
            first = int(fits.argmax())
            chosen = [first] if fits[first] else []
        else:
            chosen = np.flatnonzero(fits)[:full].tolist()
        for pos in chosen:
            if cancelled():
                return
            yield (pos if order is None else int(order[pos])), p
        if len(chosen) < full:
            return
        last = chosen[-1]
    if rest:
        tail = cap[last + 1:] >= rest
        at = int(tail.argmax()) if len(tail) else 0
        if not len(tail) or not tail[at] or cancelled():
            return
        pos = last + 1 + at
        yield (pos if order is None else int(order[pos])), rest


def _fill(p: int, ntasks: int, cap: np.ndarray, order: np.ndarray | None, cancelled) -> Iterator[tuple[int, int]]:
    """The fill plan's walk: each candidate in order takes ``min(capacity, p, remaining)``.

    The running total of the capped capacities says where N is reached, so only the hosts used
    cost a Python step. Short of N it yields what it found, and the caller sees too few tasks.
    """
    take = np.minimum(cap, p)
    np.maximum(take, 0, out=take)
    upto = np.cumsum(take)
    end = int(np.searchsorted(upto, ntasks)) + 1  # hosts up to and including the one reaching N
    remaining = ntasks
    for pos in np.flatnonzero(take[:end]).tolist():
        if cancelled():
            return
        t = min(int(take[pos]), remaining)
        yield (pos if order is None else int(order[pos])), t
        remaining -= t
