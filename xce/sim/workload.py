"""Reading a workload: an SWF trace, or the JSON-lines workload ``xce workload export --format xce`` writes.

The JSON-lines workload keeps what SWF cannot (user, queue, project and job type names, the resource
requirement string the scheduler saw, priorities, the real start times), so a simulation of the
cluster's own history places each job as the production core would. It reads into the same
:class:`~xce.sim.swf.SwfTrace` columns as SWF (whole seconds after the header's ``unix_start``),
with the rest in :class:`WorkloadNames` on ``trace.names``; the engine uses the names when they are
there. Jobs that waited for a begin time or a dependency arrive when they became eligible (see
:func:`_eligible`). The reader is as strict as the SWF one: a line that is not a job object is ``FILE:LINE:
problem``; a job that never started (killed while pending) is skipped and counted, as SWF's run
time -1 is.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from xce.sim import swf
from xce.sim.swf import SwfError, SwfTrace

NS = 1_000_000_000
#: Jobs a stored dependency names, with the condition on each (``done(12) && started(13[2])``, ``12``).
_DEP = re.compile(r"(?:(done|exit|ended|started)\(|^|&&|\|\||\(|!)\s*([0-9]+)")
NOT_STARTED = "never started (killed while pending)"
_REQUIRED = ("jobid", "user", "queue", "tasks", "submit_time", "start_time", "end_time")


@dataclass(slots=True)
class WorkloadNames:
    """Per job, in the trace's order: what the SWF columns only number."""

    header: dict[str, Any] = field(default_factory=dict)
    user: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)
    project: list[str] = field(default_factory=list)
    job_type: list[str] = field(default_factory=list)
    request: list[str] = field(default_factory=list)
    priority: array = field(default_factory=lambda: array("q"))
    #: When the job really started, in the trace's seconds (the same clock as ``trace.submit``).
    real_start: array = field(default_factory=lambda: array("q"))


def _sniff(path: str | Path) -> str:
    """``xce`` when the file's first non-blank character opens a JSON object, else ``swf``."""
    with swf.open_text(path) as fh:
        for line in fh:
            s = line.strip()
            if s:
                return "xce" if s.startswith("{") else "swf"
    return "swf"


def read_workload(path: str | Path, max_jobs: int | None = None, *, skip_malformed: bool = False) -> SwfTrace:
    """An SWF trace or an XCE JSON-lines workload (gzip/bzip2/xz too), told apart by content."""
    try:
        kind = _sniff(path)
    except swf.stream_errors() as exc:  # even its first line cannot be decompressed
        raise SwfError(str(path), 1, f"the compressed file is corrupt or cut short ({exc})") from None
    if kind == "swf":
        return swf.read_swf(path, max_jobs, skip_malformed=skip_malformed)
    with swf.open_text(path) as fh:
        try:
            return parse_jsonl(fh, str(path), max_jobs, skip_malformed=skip_malformed)
        except swf.stream_errors() as exc:
            raise SwfError(str(path), None, f"the compressed file is corrupt or cut short ({exc})") from None


def _int(obj: dict[str, Any], key: str, lineno: int, source: str, *, optional: bool = False,
         low: int = 0) -> int | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low or value > 2**63 - 1:
        raise SwfError(source, lineno, f"{key} must be a whole number >= {low}, got {value!r}")
    return value


def _str(obj: dict[str, Any], key: str, lineno: int, source: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if value is None and default is not None:
        value = default
    if not isinstance(value, str):
        raise SwfError(source, lineno, f"{key} must be a string, got {value!r}")
    return value


def _eligible(jobs: list[tuple[int, int, dict[str, Any]]]) -> None:
    """A job that waited for a begin time or for other jobs arrives, for the simulator, when it
    became eligible in reality: the latest of its submission, its begin time and the real start
    (``started``) or end (``done``, ``exit``, ``ended``) of each job its dependency names that is in
    the workload. The simulator has no dependencies of its own; this keeps such a job from starting
    before what it waited for."""
    times = {int(o["jobid"]): (int(o["start_time"]), int(o["end_time"])) for _, _, o in jobs}
    for k, (submit, order, o) in enumerate(jobs):
        at = submit
        begin = o.get("begin_time")
        if isinstance(begin, int) and not isinstance(begin, bool):
            at = max(at, begin)
        deps = o.get("dependencies")
        if isinstance(deps, str):
            for kind, jobid in _DEP.findall(deps):
                ran = times.get(int(jobid))
                if ran is not None:
                    at = max(at, ran[0] if kind == "started" else ran[1])
        if at != submit:
            jobs[k] = (min(at, int(o["start_time"])), order, o)


def parse_jsonl(lines: Iterable[str], source: str = "<lines>", max_jobs: int | None = None, *,
                skip_malformed: bool = False) -> SwfTrace:
    t = SwfTrace(source=source)
    names = WorkloadNames()
    t.names = names
    header: dict[str, Any] | None = None
    numbers: dict[str, dict[str, int]] = {"user": {}, "queue": {}, "type": {}}
    jobs: list[tuple[int, int, dict[str, Any]]] = []
    seen: set[int] = set()
    lineno = 0
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        try:
            obj = json.loads(s)
        except ValueError as exc:
            if header is None:
                raise SwfError(source, lineno, f"not an XCE workload: the first line is not JSON ({exc})") from None
            t.job_lines += 1
            t.skipped[swf.NOT_A_NUMBER] += 1
            if t.first_malformed is None:
                t.first_malformed = (lineno, f"not a JSON object ({exc})")
            continue
        if header is None:
            if not isinstance(obj, dict) or obj.get("xce_workload") != 1:
                raise SwfError(source, lineno, "not an XCE workload: the first line must be the header "
                                               '{"xce_workload": 1, ...}')
            header = obj
            continue
        if max_jobs is not None and len(jobs) >= max_jobs:
            break
        t.job_lines += 1
        if not isinstance(obj, dict):
            raise SwfError(source, lineno, f"a job line must be a JSON object, got {type(obj).__name__}")
        missing = [k for k in _REQUIRED if k not in obj]
        if missing:
            raise SwfError(source, lineno, f"job line without {', '.join(missing)}")
        jobid = _int(obj, "jobid", lineno, source, low=1)
        _int(obj, "tasks", lineno, source, low=1)
        submit = _int(obj, "submit_time", lineno, source)
        start = _int(obj, "start_time", lineno, source, optional=True)
        end = _int(obj, "end_time", lineno, source, optional=True)
        for key in ("user", "queue"):
            _str(obj, key, lineno, source)
        if jobid in seen:
            t.skipped[swf.DUPLICATE] += 1
            continue
        seen.add(jobid)
        if start is None or end is None:
            t.skipped[NOT_STARTED] += 1
            if len(t.skipped_examples) < 20:
                t.skipped_examples.append((lineno, NOT_STARTED))
            continue
        obj["_line"] = lineno
        jobs.append((submit, len(jobs), obj))  # type: ignore[arg-type]
    if header is None:
        raise SwfError(source, None, f"no header line in {lineno} line(s): not an XCE workload")
    names.header = header
    base = header.get("unix_start")
    if not isinstance(base, int):
        base = min((j[0] for j in jobs), default=0) // NS
    t.header["UnixStartTime"] = str(base)
    t.header["TimeZoneString"] = "UTC"
    if header.get("hosts"):
        t.header["MaxNodes"], t.header["MaxProcs"] = str(header["hosts"]), str(header.get("slots") or header["hosts"])
    _eligible(jobs)
    jobs.sort(key=lambda j: (j[0], j[1]))

    def number(kind: str, name: str) -> int:
        if not name:
            return -1
        table = numbers[kind]
        return table.setdefault(name, len(table) + 1)

    for submit, _, o in jobs:
        tasks = int(o["tasks"])
        start, end = int(o["start_time"]), int(o["end_time"])
        t.jobid.append(int(o["jobid"]))
        t.submit.append(max(0, submit // NS - base))
        t.run.append(max(0, round((end - start) / NS)))
        t.procs.append(tasks)
        limit = o.get("run_limit")
        t.req_time.append(int(limit) if isinstance(limit, int) and limit > 0 else -1)
        peak, declared = o.get("mem_peak"), o.get("mem_declared")
        t.used_mem.append(int(peak) // 1024 // tasks if isinstance(peak, int) and peak > 0 else -1)
        t.req_mem.append(int(declared) // 1024 // tasks if isinstance(declared, int) and declared > 0 else -1)
        user, queue, jtype = o["user"], o["queue"], o.get("job_type") or ""
        t.user.append(number("user", user))
        t.queue.append(number("queue", queue))
        t.partition.append(-1)
        t.executable.append(number("type", jtype))
        names.user.append(user)
        names.queue.append(queue)
        names.project.append(o.get("project") or "default")
        names.job_type.append(jtype)
        req = o.get("sched_request")
        names.request.append(req if isinstance(req, str) else (o.get("request") or ""))
        prio = o.get("priority")
        names.priority.append(prio if isinstance(prio, int) and not isinstance(prio, bool) else 0)
        names.real_start.append(start // NS - base)
    t.queue_names = {n: q for q, n in numbers["queue"].items()}
    swf.check_trace(t, skip_malformed=skip_malformed, last_line=lineno)
    return t
