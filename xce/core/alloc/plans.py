"""The lazy plan iterator (Req 2).

A plan says how many tasks each chosen host takes: ``slots_per_host`` p, and so
``nhosts = ceil(N / p)``. Plans run from the most packed (1 host x N) to the most spread
(N hosts x 1): p walks the distinct values of ceil(N/k) for k = 1..N. The iterator is a
generator: one plan per ``next()``, a stable ``StopIteration`` once exhausted, and ``close()``
releases it.

Those equal-share plans are the specification's and come first, unchanged. They miss uneven
free space: 5 tasks on hosts with 4 and 1 free slots fit no p (p=5 and p=3 need a host with 5 or
3, p=2 and p=1 need three or five hosts). So one last *fill* plan follows: walk the hosts in the
host iterator's order and give each as many tasks as it can take. ``span[hosts=N]`` and
``span[ptile=p]`` fix the spread, so they get no fill plan: ptile is "the number of processors on
each host that should be allocated to the job" (LSF's span string), p on every host but the last,
which ``mpirun -ppn p`` and ``--ntasks-per-node`` scripts rely on, not at most p.
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
    #: The last plan: hosts take as many tasks as they can, up to ``slots_per_host`` each, so
    #: ``nhosts`` is only the fewest hosts it could use.
    fill: bool = False


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def plan_iter(primary: Any, most: int | None = None) -> Iterator[Plan]:
    """The specification's plans for ``primary``, then the fill plan where a spread is allowed.

    ``most``: the most tasks any host could take now; see ``spec_plans``."""
    yield from spec_plans(primary, most)
    n = primary.tasks
    if n > 1 and primary.span_hosts is None and primary.span_ptile is None:
        yield Plan(1, n, primary, fill=True)


def spec_plans(primary: Any, most: int | None = None) -> Iterator[Plan]:
    """The specification's equal-share plans for ``primary`` (an ``xce.core.resreq.Primary``),
    most preferred first.

    ``span[hosts=1]`` allows only 1 x N; ``span[ptile=p]`` only plans with that p. A single-task
    job gets the single trivial plan 1 x 1 (the seqjob rewrap: first matching host wins).

    Given ``most`` (the most tasks any host could take now), the equal-share plans giving each host
    more start later: no host could take them, and a wide job on one-slot hosts would otherwise walk
    some 2 * sqrt(N) plans to reach N x 1.
    """
    n = primary.tasks
    if primary.span_hosts == 1:
        yield Plan(1, n, primary)
        return
    if primary.span_hosts:
        # span[hosts=N]: ceil(n/N) tasks on each host but the last; the parser admits only an N
        # that this fills exactly (ceil(n / ceil(n/N)) == N).
        p = _ceil_div(n, primary.span_hosts)
        yield Plan(primary.span_hosts, p, primary)
        return
    if primary.span_ptile:
        p = min(primary.span_ptile, n)
        yield Plan(_ceil_div(n, p), p, primary)
        return
    k = 1 if most is None else n + 1 if most < 1 else _ceil_div(n, most)  # the first k with ceil(n/k) <= most
    while k <= n:
        p = _ceil_div(n, k)
        yield Plan(_ceil_div(n, p), p, primary)
        # The next distinct value is p-1 or less, first reached at k = ceil(n / (p - 1)).
        k = _ceil_div(n, p - 1) if p > 1 else n + 1
