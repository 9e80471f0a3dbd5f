"""Standard Workload Format import, strict about what it cannot read and honest about what it skips.

A trace is a measurement, not a promise. Two kinds of line are told apart:

* a *malformed* line (fewer than 18 fields, a field that is not a number, a number out of range)
  means the file is not what it claims to be: a handful is tolerated and counted, more than
  :data:`MAX_MALFORMED_SHARE` of the job lines is an error naming the first bad line, unless the
  caller asks to skip them (``skip_malformed``);
* a well-formed line that cannot be a job (run time or processors unknown, a repeated number) is a
  normal part of archive logs: it is skipped and counted by reason.

So a report never silently simulates fewer jobs than the trace holds, and a file that is not an
SWF trace at all (a compressed file read as text, random bytes) is refused instead of "simulated"
as zero jobs. Compressed traces (gzip, bzip2, xz) are recognised by their first bytes, whatever
their name. Fields beyond the standard 18 (the Alea format's, other extensions) are ignored.

Jobs are kept in parallel ``array('q')`` columns, not one object per job: a 300,000-job trace
loads in about a second and takes a few dozen megabytes.
"""

from __future__ import annotations

import io
import operator
import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable

NFIELDS = 18

#: Skip reasons, as they appear in the summary. The first three are "malformed".
MALFORMED = "malformed line (fewer than 18 fields)"
NOT_A_NUMBER = "malformed line (a field is not a number)"
OUT_OF_RANGE = "malformed line (a number out of range)"
MALFORMED_REASONS = (MALFORMED, NOT_A_NUMBER, OUT_OF_RANGE)
NEGATIVE_RUN = "run time < 0 (unknown)"
NO_PROCS = "processors <= 0 (unknown)"
NEGATIVE_SUBMIT = "submit time < 0"
DUPLICATE = "duplicate job number"

#: More malformed job lines than this share of all job lines is an error (``skip_malformed`` aside).
MAX_MALFORMED_SHARE = 0.01
#: Times (fields 2-4, 9) in seconds: the core counts nanoseconds in 64 bits, so 2**32 s (136 years)
#: leaves room for the waits that follow. Processors: a machine of 2**31 of them does not exist.
MAX_SECONDS = 2**32 - 1
MAX_PROCS = 2**31 - 1
MAX_OTHER = 2**62

#: Names of the 18 fields, for error messages (1-based, as the SWF definition numbers them).
FIELD_NAMES = ("job number", "submit time", "wait time", "run time", "allocated processors",
               "average CPU time", "used memory", "requested processors", "requested time",
               "requested memory", "status", "user id", "group id", "executable number", "queue number",
               "partition number", "preceding job", "think time")
_TIME_FIELDS = (1, 2, 3, 8)
_PROC_FIELDS = (4, 7)
#: Header labels whose value is a number; ``MaxNodes``/``MaxProcs`` must be positive.
_POSITIVE_HEADERS = ("MaxNodes", "MaxProcs")
_COUNT_HEADERS = ("UnixStartTime", "MaxJobs", "MaxRecords", "MaxQueues", "MaxPartitions", "MaxRuntime",
                  "MaxMemory")
_HEADER = re.compile(r";\s{0,3}([A-Z][A-Za-z]*)\s*:\s*(.*)")
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]*)?")
_COLUMNS = ("jobid", "submit", "run", "procs", "req_time", "used_mem", "req_mem", "user", "queue", "partition",
            "executable")


class SwfError(ValueError):
    """A trace that cannot be simulated as it is; ``str()`` is one line: ``file:line: problem``."""

    def __init__(self, source: str, lineno: int | None, problem: str) -> None:
        self.source = source
        self.lineno = lineno
        self.problem = problem
        super().__init__(f"{source}:{lineno}: {problem}" if lineno else f"{source}: {problem}")


def _column() -> array:
    return array("q")


@dataclass(slots=True)
class SwfTrace:
    """A trace's jobs in submit order (stable for equal submit times, as in the file).

    Times are whole seconds, memory KB per processor; ``-1`` keeps SWF's "unknown".
    """

    source: str = ""
    header: dict[str, str] = field(default_factory=dict)
    #: Line number of each header label (its first occurrence).
    header_lines: dict[str, int] = field(default_factory=dict)
    #: ``; Queue: N name`` and ``; Partition: N name`` lines: number -> name.
    queue_names: dict[int, str] = field(default_factory=dict)
    partition_names: dict[int, str] = field(default_factory=dict)
    #: Header values that are not what their label needs, as one-line messages with the line.
    header_problems: dict[str, str] = field(default_factory=dict)
    jobid: array = field(default_factory=_column)
    submit: array = field(default_factory=_column)
    run: array = field(default_factory=_column)
    procs: array = field(default_factory=_column)
    req_time: array = field(default_factory=_column)
    used_mem: array = field(default_factory=_column)
    req_mem: array = field(default_factory=_column)
    user: array = field(default_factory=_column)
    queue: array = field(default_factory=_column)
    partition: array = field(default_factory=_column)
    executable: array = field(default_factory=_column)
    #: Job lines seen (comments and blank lines excluded), kept or not.
    job_lines: int = 0
    skipped: Counter = field(default_factory=Counter)
    #: First few skipped lines as (line number, reason), for the person reading the report.
    skipped_examples: list[tuple[int, str]] = field(default_factory=list)
    #: The first malformed line as (line number, what is wrong with it), if any.
    first_malformed: tuple[int, str] | None = None
    #: What an XCE JSON-lines workload knows beyond SWF's numbers (names, request strings, real
    #: start times); None for an SWF trace. See :mod:`xce.sim.workload`.
    names: Any = None

    def __len__(self) -> int:
        return len(self.jobid)

    @property
    def name(self) -> str:
        """The file name without directories, as plot titles show it."""
        return Path(self.source).name if self.source else "trace"

    @property
    def malformed(self) -> int:
        return sum(self.skipped.get(r, 0) for r in MALFORMED_REASONS)

    def header_int(self, key: str) -> int | None:
        """A numeric header value, or None when absent or invalid (see ``header_problems``)."""
        if key in self.header_problems:
            return None
        value = self.header.get(key)
        try:
            return int(value.split()[0]) if value else None
        except ValueError:
            return None

    @property
    def unix_start(self) -> int | None:
        """``UnixStartTime``: the wall-clock second that submit time 0 stands for."""
        return self.header_int("UnixStartTime")

    @property
    def timezone(self) -> str | None:
        return self.header.get("TimeZoneString") or None

    def machine(self) -> tuple[int, int] | None:
        """(hosts, slots per host) of the machine the trace ran on, from ``MaxNodes``/``MaxProcs``.

        ``MaxProcs`` is the machine's size in processors (what SWF field 5 counts). When it divides
        evenly into ``MaxNodes`` hosts those are the hosts; otherwise one processor per host keeps the
        size exact.
        """
        nodes, procs = self.header_int("MaxNodes"), self.header_int("MaxProcs")
        if nodes is None and procs is None:
            return None
        nodes = nodes or procs
        procs = procs or nodes
        assert nodes and procs
        if procs % nodes == 0:
            return nodes, procs // nodes
        return procs, 1


def _parse_header(t: SwfTrace, lineno: int, s: str) -> None:
    m = _HEADER.fullmatch(s)
    if m is None:
        return  # a note's continuation line, or free text
    key, value = m.group(1), m.group(2).strip()
    if key in ("Queue", "Partition"):
        number, _, label = value.partition(" ")
        try:
            num = int(number)
        except ValueError:
            return
        (t.queue_names if key == "Queue" else t.partition_names).setdefault(num, label.strip() or str(num))
        return
    if key in t.header:
        return
    t.header[key] = value
    t.header_lines[key] = lineno
    if key in _POSITIVE_HEADERS or key in _COUNT_HEADERS or key == "TimeZone":
        first = value.split()[0] if value.split() else ""
        ok = bool(re.fullmatch(r"-?[0-9]{1,18}", first))
        if ok and key in _POSITIVE_HEADERS:
            ok = int(first) > 0
        elif ok and key in _COUNT_HEADERS:
            ok = int(first) >= 0
        if not ok:
            need = ("a positive integer" if key in _POSITIVE_HEADERS else
                    "an integer" if key == "TimeZone" else "a non-negative integer")
            t.header_problems[key] = f"line {lineno}: header {key} must be {need}, got {value[:40]!r}"


def _field_problem(parts: list[str]) -> tuple[str, str, list[int] | None]:
    """Slow path for a line the fast path refused: (reason, detail, fields or None)."""
    values = []
    for k in range(NFIELDS):
        p = parts[k]
        if not p.isascii() or _DECIMAL.fullmatch(p) is None:
            shown = p if len(p) <= 20 else p[:17] + "..."
            return NOT_A_NUMBER, f"field {k + 1} ({FIELD_NAMES[k]}) is not a number: {shown!r}", None
        values.append(int(float(p)) if "." in p else int(p))
    bad = _range_problem(values)
    if bad:
        return OUT_OF_RANGE, bad, None
    return "", "", values


def _range_problem(f: list[int]) -> str:
    for k in _TIME_FIELDS:
        if f[k] > MAX_SECONDS:
            return f"field {k + 1} ({FIELD_NAMES[k]}) is out of range: {f[k]} s (at most {MAX_SECONDS})"
    for k in _PROC_FIELDS:
        if f[k] > MAX_PROCS:
            return f"field {k + 1} ({FIELD_NAMES[k]}) is out of range: {f[k]} (at most {MAX_PROCS})"
    for k in range(NFIELDS):
        if not -MAX_OTHER <= f[k] <= MAX_OTHER:
            return f"field {k + 1} ({FIELD_NAMES[k]}) is out of range: {f[k]}"
    return ""


def parse_lines(lines: Iterable[str], source: str = "<lines>", max_jobs: int | None = None, *,
                skip_malformed: bool = False, check: bool = True) -> SwfTrace:
    """Parse SWF lines; ``check`` applies :func:`check_trace` (raising :class:`SwfError`)."""
    t = SwfTrace(source=source)
    seen: set[int] = set()
    cols = [t.jobid, t.submit, t.run, t.procs, t.req_time, t.used_mem, t.req_mem, t.user, t.queue, t.partition,
            t.executable]
    a_jobid, a_submit, a_run, a_procs, a_req_time, a_used, a_req_mem, a_user, a_queue, a_part, a_exe = (
        c.append for c in cols)
    skipped = t.skipped
    examples = t.skipped_examples
    job_lines = 0
    kept = 0
    lineno = 0

    def skip(lineno: int, reason: str, detail: str = "") -> None:
        skipped[reason] += 1
        if len(examples) < 20:
            examples.append((lineno, reason))
        if detail and t.first_malformed is None:
            t.first_malformed = (lineno, detail)

    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        if s[0] == ";":
            _parse_header(t, lineno, s)
            continue
        if max_jobs is not None and kept >= max_jobs:
            break
        job_lines += 1
        parts = s.split()
        if len(parts) < NFIELDS:
            skip(lineno, MALFORMED, f"{len(parts)} field(s), an SWF job line has 18")
            continue
        f = None
        if s.isascii() and "_" not in s:
            try:
                f = list(map(int, parts[:NFIELDS]))
            except ValueError:
                f = None
            if f is not None and (max(f) > MAX_SECONDS or min(f) < -MAX_OTHER):
                bad = _range_problem(f)
                if bad:
                    skip(lineno, OUT_OF_RANGE, bad)
                    continue
        if f is None:
            reason, detail, f = _field_problem(parts)
            if f is None:
                skip(lineno, reason, detail)
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
            kept += 1
            a_jobid(f[0])
            a_submit(f[1])
            a_run(f[3])
            a_procs(procs)
            a_req_time(f[8])
            a_used(f[6])
            a_req_mem(f[9])
            a_user(f[11])
            a_queue(f[14])
            a_part(f[15])
            a_exe(f[13])
    t.job_lines = job_lines
    _sort_by_submit(t)
    if check:
        check_trace(t, skip_malformed=skip_malformed, last_line=lineno)
    return t


def _sort_by_submit(t: SwfTrace) -> None:
    """Stable sort of every column by submit time; archive traces are usually sorted already."""
    sub = t.submit
    if all(map(operator.le, sub, sub[1:])):  # pairwise, without a Python step per job
        return
    order = sorted(range(len(sub)), key=sub.__getitem__)
    for name in _COLUMNS:
        col = getattr(t, name)
        setattr(t, name, array("q", [col[i] for i in order]))


def check_trace(t: SwfTrace, *, skip_malformed: bool = False, last_line: int = 0) -> None:
    """Refuse a trace with no job, or with more than a small share of malformed lines."""
    bad = t.malformed
    if bad and (len(t) == 0 or bad > MAX_MALFORMED_SHARE * t.job_lines) and not skip_malformed:
        lineno, detail = t.first_malformed or (None, "malformed")
        raise SwfError(t.source, lineno, f"{detail}; {bad} of {t.job_lines} job line(s) are malformed "
                                         "(is this an SWF trace? --skip-malformed simulates the rest)")
    if len(t) == 0:
        if t.job_lines == 0:
            raise SwfError(t.source, None, f"no job line in {last_line} line(s): not an SWF trace, or only its header")
        reasons = ", ".join(f"{r}: {n}" for r, n in sorted(t.skipped.items()))
        raise SwfError(t.source, None, f"none of the {t.job_lines} job line(s) can be simulated ({reasons})")


#: First bytes of the compressed formats archive traces come in, and how to open each.
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def _compression(path: str | Path) -> str | None:
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def open_text(path: str | Path) -> IO[str]:
    """The trace as text, decompressed if it is gzip, bzip2 or xz. Bytes that are not UTF-8 become
    U+FFFD, which no number contains: such a job line is malformed, a header line just reads oddly.

    The decompressors are imported only for a file that needs one: most traces are plain text.
    """
    kind = _compression(path)
    if kind == "gzip":
        import gzip

        raw: IO[bytes] = gzip.open(path, "rb")
    elif kind == "bzip2":
        import bz2

        raw = bz2.open(path, "rb")
    elif kind == "xz":
        import lzma

        raw = lzma.open(path, "rb")
    else:
        raw = open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)


def stream_errors() -> tuple[type[Exception], ...]:
    """What a corrupt or truncated gzip, bzip2 or xz stream raises while it is read.

    A function, for ``except stream_errors():``, which runs only when something was raised.
    """
    import gzip
    import lzma
    import zlib

    return EOFError, gzip.BadGzipFile, lzma.LZMAError, zlib.error


class _Counted:
    """Line iterator that remembers how far it got, so a broken stream's error names a line."""

    __slots__ = ("fh", "lines")

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.lines = 0

    def __iter__(self):
        for line in self.fh:
            self.lines += 1
            yield line


def read_swf(path: str | Path | IO[str], max_jobs: int | None = None, *, skip_malformed: bool = False,
             check: bool = True) -> SwfTrace:
    """Read a trace (``.swf``, or gzip/bzip2/xz compressed); ``max_jobs`` keeps the first N jobs.

    Raises :class:`SwfError` for a file that cannot be simulated (see :func:`check_trace`) or whose
    compressed stream is corrupt or cut short, and ``OSError`` for one that cannot be opened.
    """
    if hasattr(path, "read"):
        return parse_lines(path, getattr(path, "name", "<stream>"), max_jobs,  # type: ignore[arg-type]
                           skip_malformed=skip_malformed, check=check)
    source = str(path)
    with open_text(path) as fh:
        counted = _Counted(fh)
        try:
            return parse_lines(counted, source, max_jobs, skip_malformed=skip_malformed, check=check)
        except stream_errors() as exc:
            raise SwfError(source, counted.lines + 1, f"the compressed file is corrupt or cut short ({exc})") from None
        except OSError as exc:
            if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
                raise
            raise SwfError(source, counted.lines + 1, f"the compressed file is corrupt ({exc})") from None
