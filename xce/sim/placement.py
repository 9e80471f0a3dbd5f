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


class Placements:
    """Per trace index, the hosts a job ran on (``()`` for a job that never started)."""

    __slots__ = ("names", "index", "_packed")

    def __init__(self, host_names: Sequence[str], jobs: int) -> None:
        self.names = list(host_names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self._packed: list[bytes | None] = [None] * jobs

    def set(self, i: int, placement: Sequence[tuple[str, int]]) -> None:
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
