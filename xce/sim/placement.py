"""Where each simulated job ran, stored compactly.

The core's placement is a tuple of ``(host name, tasks)`` pairs: fine while a job runs, far too big
to keep for every job of a trace (a job spread over 9,216 hosts is 9,216 tuples, and an archive
trace has thousands of such jobs). A finished job's placement is kept instead as *runs*: each run
is (first host index, number of consecutive hosts, tasks on each), packed into 12 bytes. The core
fills hosts in name order, which is index order, so a wide job is usually one or two runs.
"""

from __future__ import annotations

from array import array
from typing import Iterator, Sequence

import numpy as np

#: Hosts from which vector operations pack a placement faster than a Python loop does (measured
#: from host indexes: 128 hosts 12 us by the loop against 22 us, 512 hosts 46 against 27 us).
WIDE = 256


class Placements:
    """Per trace index, the hosts a job ran on (``()`` for a job that never started)."""

    __slots__ = ("names", "index", "_packed")

    def __init__(self, host_names: Sequence[str], jobs: int) -> None:
        self.names = list(host_names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self._packed: list[bytes | None] = [None] * jobs

    def set(self, i: int, placement: Sequence[tuple[str, int]]) -> None:
        if len(placement) >= WIDE:
            names, tasks = zip(*placement, strict=True)
            n = len(names)
            self.set_indexes(i, np.fromiter(map(self.index.__getitem__, names), dtype=np.int64, count=n),
                             np.fromiter(tasks, dtype=np.int64, count=n))
            return
        index = self.index
        runs = array("i")
        first = count = tasks = -1
        for name, n in placement:
            h = index[name]
            if n == tasks and h == first + count:
                count += 1
                continue
            if count > 0:
                runs.extend((first, count, tasks))
            first, count, tasks = h, 1, n
        if count > 0:
            runs.extend((first, count, tasks))
        self._packed[i] = runs.tobytes()

    def set_indexes(self, i: int, hosts: np.ndarray, tasks: np.ndarray) -> None:
        """``set`` from host indexes (into ``names``) and tasks, in placement order: the same runs,
        found with a few vector operations, so a job on thousands of hosts costs no Python step per
        host."""
        n = len(hosts)
        if not n:
            self._packed[i] = b""
            return
        first = np.flatnonzero((hosts[1:] != hosts[:-1] + 1) | (tasks[1:] != tasks[:-1])) + 1
        first = np.concatenate(([0], first))
        runs = np.empty((len(first), 3), dtype=np.intc)  # the C int of ``array("i")``
        runs[:, 0] = hosts[first]
        runs[:, 1] = np.diff(first, append=n)
        runs[:, 2] = tasks[first]
        self._packed[i] = runs.tobytes()

    def packed(self, i: int) -> bytes | None:
        """Job ``i``'s runs as packed bytes (None: never started): equal bytes, equal placement."""
        return self._packed[i]

    def runs(self, i: int) -> list[tuple[int, int, int]]:
        """(first host index, hosts, tasks per host) runs of job ``i``, in host order."""
        blob = self._packed[i]
        if not blob:
            return []
        a = array("i")
        a.frombytes(blob)
        return [(a[k], a[k + 1], a[k + 2]) for k in range(0, len(a), 3)]

    def hosts(self, i: int) -> Iterator[tuple[int, int]]:
        """(host index, tasks) for every host of job ``i``."""
        for first, count, tasks in self.runs(i):
            for h in range(first, first + count):
                yield h, tasks

    def __getitem__(self, i: int) -> tuple[tuple[str, int], ...]:
        names = self.names
        return tuple((names[h], t) for h, t in self.hosts(i))

    def text(self, i: int) -> str:
        """``h001:2 h002:2``: every host with its task count, as the per-job CSV writes it."""
        names = self.names
        return " ".join(f"{names[h]}:{t}" for h, t in self.hosts(i))

    def __len__(self) -> int:
        return len(self._packed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Placements):
            return NotImplemented
        return self.names == other.names and self._packed == other._packed

    def nbytes(self) -> int:
        """Bytes held by the packed runs (the list itself aside), for the memory benchmark."""
        return sum(len(b) for b in self._packed if b)
