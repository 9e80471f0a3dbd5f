"""``xce.io/memory-bytes``: physical memory as the kernel reports it in ``/proc/meminfo``.

``MemTotal`` rather than a configured figure or ``MemAvailable``: the scheduler accounts
reservations against what the machine has, and a momentary free-memory reading would make
the advertised capacity move with whatever else happens to be running.  When the file
cannot be read or parsed the resource is hidden, never reported as zero bytes.
"""

from __future__ import annotations

from xce.providers.base import ResourceProvider

__all__ = ["MEMORY_BYTES", "MemoryBytesProvider", "read_memtotal"]

MEMORY_BYTES = "xce.io/memory-bytes"
MEMINFO = "/proc/meminfo"


def read_memtotal(path: str = MEMINFO) -> int:
    """MemTotal in bytes; raises ``OSError`` or ``ValueError`` when it cannot be learned.

    The kernel writes ``kB`` but means KiB.  Any other unit is refused rather than guessed.
    """
    with open(path, encoding="ascii", errors="replace") as fh:
        for line in fh:
            key, sep, rest = line.partition(":")
            if key.strip() != "MemTotal" or not sep:
                continue
            fields = rest.split()
            if len(fields) != 2 or fields[1] != "kB" or not fields[0].isdigit():
                raise ValueError(f"unexpected MemTotal line in {path}: {line.strip()!r}")
            return int(fields[0]) * 1024
    raise ValueError(f"no MemTotal line in {path}")


class MemoryBytesProvider(ResourceProvider):
    """``meminfo_path`` exists so tests can point at a crafted file; workers use the default."""

    resource_name = MEMORY_BYTES

    def __init__(self, meminfo_path: str = MEMINFO) -> None:
        self._path = meminfo_path
        self._bytes: int | None = None
        self._measured = False
        self.unavailable_reason: str | None = None

    def _measure(self) -> int | None:
        if not self._measured:
            try:
                self._bytes = read_memtotal(self._path)
            except (OSError, ValueError) as exc:
                self._bytes = None
                self.unavailable_reason = f"cannot read MemTotal from {self._path}: {exc}"
            self._measured = True
        return self._bytes

    def is_available(self) -> bool:
        return self._measure() is not None

    def capacity(self) -> int:
        total = self._measure()
        if total is None:
            raise RuntimeError(f"{MEMORY_BYTES} is unavailable: {self.unavailable_reason}")
        return total
