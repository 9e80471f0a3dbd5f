"""Standard Workload Format import.

A trace is a measurement, not a promise: lines that cannot be a job are skipped, but every skip
is counted by reason so that a report never silently simulates fewer jobs than the trace holds.
Jobs are kept in parallel lists (not one object per job) because a 200,000-job trace must load
in well under a second and stay small in memory.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

NFIELDS = 18

#: Skip reasons, as they appear in the summary.
MALFORMED = "malformed line (expected 18 numeric fields)"
NEGATIVE_RUN = "run time < 0 (unknown)"
NO_PROCS = "processors <= 0 (unknown)"
NEGATIVE_SUBMIT = "submit time < 0"
DUPLICATE = "duplicate job number"


@dataclass(slots=True)
class SwfTrace:
    """A trace's jobs in submit order (stable for equal submit times, as in the file).

    Times are whole seconds, memory KB per processor; ``-1`` keeps SWF's "unknown".
    """

    source: str = ""
    header: dict[str, str] = field(default_factory=dict)
    jobid: list[int] = field(default_factory=list)
    submit: list[int] = field(default_factory=list)
    run: list[int] = field(default_factory=list)
    procs: list[int] = field(default_factory=list)
    req_time: list[int] = field(default_factory=list)
    used_mem: list[int] = field(default_factory=list)
    req_mem: list[int] = field(default_factory=list)
    user: list[int] = field(default_factory=list)
    queue: list[int] = field(default_factory=list)
    partition: list[int] = field(default_factory=list)
    executable: list[int] = field(default_factory=list)
    #: Job lines seen (comments and blank lines excluded), kept or not.
    job_lines: int = 0
    skipped: Counter = field(default_factory=Counter)
    #: First few skipped lines as (line number, reason), for the person reading the report.
    skipped_examples: list[tuple[int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.jobid)

    def header_int(self, key: str) -> int | None:
        value = self.header.get(key)
        try:
            return int(value.split()[0]) if value else None
        except ValueError:
            return None

    def suggested_cluster(self) -> tuple[int, int] | None:
        """(hosts, slots per host) from ``MaxNodes``/``MaxProcs``: the machine the trace ran on."""
        nodes, procs = self.header_int("MaxNodes"), self.header_int("MaxProcs")
        if nodes is None and procs is None:
            return None
        nodes = nodes or procs
        procs = procs or nodes
        return nodes, max(1, procs // nodes)


def _num(text: str) -> int:
    """SWF integers; a few archive logs write fractions (``489.00``) in integer fields."""
    try:
        return int(text)
    except ValueError:
        return int(float(text))


def parse_lines(lines: Iterable[str], source: str = "<lines>", max_jobs: int | None = None) -> SwfTrace:
    t = SwfTrace(source=source)
    seen: set[int] = set()
    rows: list[tuple[int, ...]] = []

    def skip(lineno: int, reason: str) -> None:
        t.skipped[reason] += 1
        if len(t.skipped_examples) < 20:
            t.skipped_examples.append((lineno, reason))

    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        if s[0] == ";":
            key, sep, value = s[1:].partition(":")
            if sep and key.strip() and " " not in key.strip():
                t.header.setdefault(key.strip(), value.strip())
            continue
        if max_jobs is not None and len(rows) >= max_jobs:
            break
        t.job_lines += 1
        parts = s.split()
        if len(parts) != NFIELDS:
            skip(lineno, MALFORMED)
            continue
        try:
            f = [_num(p) for p in parts]
        except ValueError:
            skip(lineno, MALFORMED)
            continue
        procs = f[4] if f[4] > 0 else f[7]
        if f[3] < 0:
            skip(lineno, NEGATIVE_RUN)
        elif procs <= 0:
            skip(lineno, NO_PROCS)
        elif f[1] < 0:
            skip(lineno, NEGATIVE_SUBMIT)
        elif f[0] in seen:
            skip(lineno, DUPLICATE)
        else:
            seen.add(f[0])
            rows.append((f[1], len(rows), f[0], f[3], procs, f[8], f[6], f[9], f[11], f[14], f[15], f[13]))
    rows.sort()
    for r in rows:
        t.submit.append(r[0])
        t.jobid.append(r[2])
        t.run.append(r[3])
        t.procs.append(r[4])
        t.req_time.append(r[5])
        t.used_mem.append(r[6])
        t.req_mem.append(r[7])
        t.user.append(r[8])
        t.queue.append(r[9])
        t.partition.append(r[10])
        t.executable.append(r[11])
    return t


def read_swf(path: str | Path | IO[str], max_jobs: int | None = None) -> SwfTrace:
    """Read a trace; ``max_jobs`` stops after that many kept jobs (a prefix, for quick runs)."""
    if hasattr(path, "read"):
        return parse_lines(path, getattr(path, "name", "<stream>"), max_jobs)  # type: ignore[arg-type]
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_lines(fh, str(path), max_jobs)
