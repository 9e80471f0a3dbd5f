"""Resource ids per job: which *slots* (not just hosts) a job held, as Batsim and Gantt charts count them.

Resources are numbered 0.. in host order, each host's slots consecutively (host ``h`` owns ids
``offset[h] .. offset[h] + slots[h] - 1``). On a cluster of one slot per host a resource is a host
and the ids come straight from the placement. With several slots per host the core only says how
many tasks a job has on a host, so slots are handed out by a sweep in time order (ends before
starts at one timestamp, lowest free slot first), which is what a node-local slot allocator does.
A preempted job keeps its start-to-end interval, suspension included; its slots may then overlap
with its preemptor's, the one place where the ids are approximate.
"""

from __future__ import annotations

import heapq
from array import array
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from xce.sim.engine import SimResult

Intervals = list[tuple[int, int]]


def host_offsets(result: "SimResult") -> list[int]:
    """First resource id of every host."""
    out, total = [], 0
    for h in result.cluster.hosts:
        out.append(total)
        total += int(h.values.get("slots", 0))
    return out


def _merge(ids: list[int]) -> Intervals:
    ids.sort()
    out: Intervals = []
    for x in ids:
        if out and x == out[-1][1] + 1:
            out[-1] = (out[-1][0], x)
        else:
            out.append((x, x))
    return out


def resource_intervals(result: "SimResult") -> Callable[[int], Intervals]:
    """A function from trace index to the job's resource id intervals (inclusive; empty if it never ran)."""
    placements = result.placement
    slots = [int(h.values.get("slots", 0)) for h in result.cluster.hosts]
    if all(s == 1 for s in slots):
        def direct(i: int) -> Intervals:
            runs = placements.runs(i)
            if len(runs) == 1:
                return [(runs[0][0], runs[0][0] + runs[0][1] - 1)]
            return _merge([h for first, count, _ in runs for h in range(first, first + count)])
        return direct

    offsets = host_offsets(result)
    start, end = result.start, result.end
    order = sorted((i for i in range(len(start)) if start[i] >= 0 and end[i] >= 0), key=lambda i: (start[i], i))
    ends: list[tuple[int, int]] = []
    free: dict[int, list[int]] = {}
    held: dict[int, list[int]] = {}
    packed: dict[int, bytes] = {}

    def release(upto: int, inclusive: bool) -> None:
        while ends and (ends[0][0] < upto or (inclusive and ends[0][0] == upto)):
            _, j = heapq.heappop(ends)
            for rid in held.pop(j):
                h = _host_of(rid)
                heapq.heappush(free[h], rid)

    bounds = offsets + [sum(slots)]

    def _host_of(rid: int) -> int:
        lo, hi = 0, len(offsets) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if bounds[mid] <= rid:
                lo = mid
            else:
                hi = mid - 1
        return lo

    for i in order:
        release(start[i], inclusive=True)
        ids: list[int] = []
        taken: list[int] = []
        for h, tasks in placements.hosts(i):
            pool = free.get(h)
            if pool is None:
                pool = free[h] = list(range(offsets[h], offsets[h] + slots[h]))
            for _ in range(tasks):
                if pool:
                    taken.append(heapq.heappop(pool))
                    ids.append(taken[-1])
                else:  # only under preemption: the interval spans the suspension
                    ids.append(offsets[h])
        held[i] = taken
        heapq.heappush(ends, (end[i], i))
        flat = array("i")
        for a, b in _merge(sorted(set(ids))):
            flat.extend((a, b))
        packed[i] = flat.tobytes()

    def swept(i: int) -> Intervals:
        blob = packed.get(i)
        if not blob:
            return []
        a = array("i")
        a.frombytes(blob)
        return [(a[k], a[k + 1]) for k in range(0, len(a), 2)]

    return swept


def interval_text(intervals: Intervals) -> str:
    """Batsim's (and procset's) interval-set text: ``0-3 8 10-11``."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in intervals)
