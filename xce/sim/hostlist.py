"""Host lists as Slurm writes node lists, for the ``hosts`` column of ``jobs.csv``.

A job spread over 93,312 hosts used to take one ``host:tasks`` word per host (lines of 711 KB,
415 MB for 20,000 jobs). The column is now a space-separated list of *items* ``HOSTLIST:TASKS``:
``HOSTLIST`` is a Slurm hostlist expression (``h[001-004,007]``: a name prefix, then numbers or
ranges whose width, zero padding included, is that of the number written) and ``TASKS`` the tasks
the job runs on each of those hosts. Hosts keep the order the core placed them in; a new item
starts where the prefix or the tasks per host change. The full list (``--full-placement``) is the
same grammar with one host per item, so :func:`expand` reads both.

    h[001-128]:1              128 hosts, one task each
    h[001-002]:4 h003:2       4 tasks on h001 and h002, 2 on h003
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from xce.hostlist import expand as expand_hostlist

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
#: Characters that would make a name ambiguous inside a hostlist: such a name is written alone.
_SPECIAL = set("[],: ")


def _split(name: str) -> tuple[str, str] | None:
    """(prefix, digits) of a name that ends in a number and can sit inside a bracket, else None."""
    if _SPECIAL & set(name):
        return None
    m = _NUMBERED.match(name)
    return (m.group(1), m.group(2)) if m else None


def _item(prefix: str, ranges: list[tuple[str, str]], tasks: int) -> str:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return f"{prefix}{ranges[0][0]}:{tasks}"
    inner = ",".join(lo if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
    return f"{prefix}[{inner}]:{tasks}"


def compress(placement: Iterable[tuple[str, int]]) -> str:
    """``(host, tasks)`` pairs in placement order -> the compact column text."""
    items: list[tuple[str | None, str, int]] = []
    for name, t in placement:
        parts = _split(name)
        items.append((parts[0], parts[1], t) if parts is not None else (None, name, t))
    return _compress(items)


def expand(text: str) -> list[tuple[str, int]]:
    """The ``hosts`` column of ``jobs.csv`` (compact or full) -> ``(host, tasks)`` pairs in order."""
    out: list[tuple[str, int]] = []
    for item in text.split():
        expr, sep, tasks = item.rpartition(":")
        if not sep or not tasks.isdigit():
            raise ValueError(f"expected HOSTLIST:TASKS, got {item!r}")
        t = int(tasks)
        out += [(name, t) for name in expand_hostlist(expr)]
    return out


class CompactWriter:
    """:func:`compress` for one cluster's jobs, working on packed placement runs, not on hosts.

    A run of consecutive host indexes whose names are consecutive numbers is one range whatever its
    length, so a 93,312-host job costs a handful of steps instead of 93,312 name look-ups. Names
    are split into prefix and number once per cluster.
    """

    __slots__ = ("names", "_parts", "_chain_end")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        n = len(self.names)
        split = [_split(name) for name in self.names]
        self._parts = [(p[0], p[1]) if p is not None else (None, name) for p, name in zip(split, self.names, strict=True)]
        #: Highest index j >= h such that hosts h..j are numbered one after another, same prefix.
        chain_end = list(range(n))
        for h in range(n - 2, -1, -1):
            a, b = split[h], split[h + 1]
            if a is not None and b is not None and a[0] == b[0] and int(b[1]) == int(a[1]) + 1 \
                    and f"{int(b[1]):0{len(a[1])}d}" == b[1]:
                chain_end[h] = chain_end[h + 1]
        self._chain_end = chain_end

    def text(self, runs: Iterable[tuple[int, int, int]]) -> str:
        """Runs of (first host index, hosts, tasks each) -> the compact column text."""
        parts, chain_end = self._parts, self._chain_end
        items: list[tuple[str | None, str, int]] = []
        for first, count, tasks in runs:
            h, stop = first, first + count
            while h < stop:
                j = min(chain_end[h], stop - 1)
                items.append((*parts[h], tasks))
                if j > h:
                    items.append((*parts[j], -tasks - 1))  # a range's end, marked (see _compress)
                h = j + 1
        return _compress(items)


def _compress(items: list[tuple[str | None, str, int]]) -> str:
    """The compression itself, over (prefix, digits, tasks) per host (prefix None: a name that is
    written alone, in the digits' place). ``(.., -tasks - 1)`` right after ``(.., tasks)`` stands
    for every host from that one to this one, all numbered one after another, so
    :class:`CompactWriter` hands over only the ends of long ranges."""
    out: list[str] = []
    prefix: str | None = None
    tasks = -1
    ranges: list[tuple[str, str]] = []
    last = -2
    width = 0
    for p, digits, t in items:
        if t < 0:  # the end of the range just opened: same prefix, numbers follow on
            ranges[-1] = (ranges[-1][0], digits)
            last = int(digits)
            continue
        if p is None:
            if prefix is not None:
                out.append(_item(prefix, ranges, tasks))
                prefix = None
            out.append(f"{digits}:{t}")
            continue
        n = int(digits)
        if prefix is not None and (p != prefix or t != tasks):
            out.append(_item(prefix, ranges, tasks))
            prefix = None
        if prefix is None:
            prefix, tasks, ranges, last, width = p, t, [(digits, digits)], n, len(digits)
        elif n == last + 1 and f"{n:0{width}d}" == digits:
            ranges[-1] = (ranges[-1][0], digits)
            last = n
        else:
            ranges.append((digits, digits))
            last, width = n, len(digits)
    if prefix is not None:
        out.append(_item(prefix, ranges, tasks))
    return " ".join(out)
