"""The lazy plan iterator (Req 2).

A plan says how many tasks each chosen host takes: ``slots_per_host`` p, and so
``nhosts = ceil(N / p)``. Plans run from the most packed (1 host x N) to the most spread
(N hosts x 1): p walks the distinct values of ceil(N/k) for k = 1..N. The iterator is a
generator: one plan per ``next()``, a stable ``StopIteration`` once exhausted, and ``close()``
releases it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator


@dataclass(frozen=True, slots=True)
class Plan:
    nhosts: int
    slots_per_host: int
    #: The primary request whose select expression filters the hosts of this plan.
    primary: Any = None


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def plan_iter(primary: Any) -> Iterator[Plan]:
    """Plans for ``primary`` (an ``xce.core.resreq.Primary``), most preferred first.

    ``span[hosts=1]`` allows only 1 x N; ``span[ptile=p]`` only plans with that p. A single-task
    job gets the single trivial plan 1 x 1 (the seqjob rewrap: first matching host wins).
    """
    n = primary.tasks
    if primary.span_hosts == 1:
        yield Plan(1, n, primary)
        return
    if primary.span_ptile:
        p = min(primary.span_ptile, n)
        yield Plan(_ceil_div(n, p), p, primary)
        return
    k = 1
    while k <= n:
        p = _ceil_div(n, k)
        yield Plan(_ceil_div(n, p), p, primary)
        # The next distinct value is p-1 or less, first reached at k = ceil(n / (p - 1)).
        k = _ceil_div(n, p - 1) if p > 1 else n + 1
