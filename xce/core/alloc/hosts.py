"""The lazy host iterator (Req 3).

Built from one plan and the job's per-host capacity (how many of its tasks each host could
take now, zero where the select expression, the host's status or any resource rules it out),
it walks candidates in the request's order and hands out ``(host, tasks)`` one at a time: each
host that can take ``min(p, remaining)`` tasks gets that many, so exactly N tasks are placed.

The contract is the specification's ``xce_host_iter_t``: :meth:`HostIter.next` gives the next
candidate or None at the end, :attr:`HostIter.end` says the walk is over, :meth:`HostIter.fini`
releases it, and a cancelled session (``cancelled()``, checked before every candidate) ends the
walk where it is. It is also a Python iterator. Lazy and cheap at once: candidates are found by
vector searches over one block of the capacity column at a time (:data:`BLOCK` hosts), so a job
that fits in the first hosts never looks at the rest of a large cluster, and a plan costs a few
numpy operations per block plus one Python step per host actually used.
"""

from __future__ import annotations

from typing import Callable, Generator

import numpy as np

from xce.core.alloc.plans import Plan

#: Hosts searched at once: large enough that the vector search dominates, small enough that a job
#: placed on the first hosts of a 100,000-host cluster does not scan them all.
BLOCK = 4096


class HostIter:
    """The candidate hosts of one plan, most preferred first (see the module's docstring)."""

    __slots__ = ("_walk", "_cancelled", "end")

    def __init__(self, plan: Plan, ntasks: int, capacity: np.ndarray, order: np.ndarray | None = None,
                 cancelled: Callable[[], bool] = lambda: False, block: int = BLOCK) -> None:
        cap = capacity if order is None else capacity[order]
        walk = _fill(plan.slots_per_host, ntasks, cap, block) if plan.fill else \
            _shares(plan.slots_per_host, ntasks, cap, block)
        self._walk = walk if order is None else ((int(order[i]), t) for i, t in walk)
        self._cancelled = cancelled
        #: True once the walk is over: every candidate given, cancelled, or released.
        self.end = False

    def next(self) -> tuple[int, int] | None:
        """The next ``(host_index, tasks)``, or None at the end."""
        if self.end:
            return None
        if self._cancelled():
            self.fini()
            return None
        item = next(self._walk, None)
        if item is None:
            self.fini()
        return item

    def fini(self) -> None:
        """Release the walk (idempotent); :meth:`next` answers None from now on."""
        self.end = True
        self._walk.close()

    def __iter__(self) -> HostIter:
        return self

    def __next__(self) -> tuple[int, int]:
        item = self.next()
        if item is None:
            raise StopIteration
        return item


def host_iter(plan: Plan, ntasks: int, capacity: np.ndarray, order: np.ndarray | None = None,
              cancelled: Callable[[], bool] = lambda: False) -> HostIter:
    """``plan``'s host iterator; ``capacity[i]`` is in tasks, ``order`` a permutation of host indexes
    (default: by name)."""
    return HostIter(plan, ntasks, capacity, order, cancelled)


def _shares(p: int, ntasks: int, cap: np.ndarray, block: int) -> Generator[tuple[int, int], None, None]:
    """An equal-share plan's walk, in positions of ``cap``: while at least p tasks remain only hosts
    that can take p qualify, so the first ``N // p`` such hosts take p each, and the remainder
    ``N % p`` goes to the first later host that can take it."""
    full, rest = divmod(ntasks, p)
    start = 0
    while full and start < len(cap):
        chosen = np.flatnonzero(cap[start:start + block] >= p)[:full] + start
        full -= len(chosen)
        start = int(chosen[-1]) + 1 if not full else start + block
        for i in chosen.tolist():
            yield i, p
    if full:
        return
    while rest and start < len(cap):
        fits = cap[start:start + block] >= rest
        at = int(fits.argmax())
        if fits[at]:
            yield start + at, rest
            return
        start += block


def _fill(p: int, ntasks: int, cap: np.ndarray, block: int) -> Generator[tuple[int, int], None, None]:
    """The fill plan's walk: each candidate in order takes ``min(capacity, p, remaining)``. The
    running total of the capped capacities in a block says where N is reached, so only the hosts
    used are listed. Short of N it gives what it found, and the caller sees too few tasks."""
    remaining = ntasks
    for start in range(0, len(cap), block):
        take = np.minimum(cap[start:start + block], p)
        np.maximum(take, 0, out=take)
        upto = np.cumsum(take)
        end = int(np.searchsorted(upto, remaining)) + 1  # hosts up to and including the one reaching N
        chosen = np.flatnonzero(take[:end])
        tasks = take[chosen]
        if len(chosen) and int(upto[chosen[-1]]) > remaining:  # the last host takes only what remains
            tasks[-1] -= int(upto[chosen[-1]]) - remaining
        for i, t in zip((chosen + start).tolist(), tasks.tolist(), strict=True):
            yield i, t
            remaining -= t
        if remaining <= 0:
            return
