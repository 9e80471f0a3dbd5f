"""Finished jobs as a workload: SWF lines, or XCE's JSON-lines that keep what SWF cannot.

Pure functions from stored rows to text, so the controller can stream an export of any size a few
thousand rows at a time and tests can check the format without a controller.

SWF (Feitelson's Standard Workload Format, version 2.2) has numbers only: users, queues and job
types are numbered in order of first appearance, and a comment line (``; Queue: 2 short``,
``; User: 3 alice``, ``; JobType: 1 etl``) names each number just before the first job that uses it.
``Queue:`` is the standard label; the other two are comments that SWF readers ignore. Times are
whole seconds after ``UnixStartTime`` (the window's start); a job that never started has run time
-1 and status 5 (cancelled), which simulators skip.

The JSON-lines workload (``--format xce``) has a header line (``{"xce_workload": 1, ...}``) and one
object per job with the resource requirement strings as submitted and as scheduled, every requested
resource, limits, priority, array membership, its name, dependencies and begin time when it has them, the real
start and end times (for comparing a simulation with reality), the memory it declared and peaked at.
Times there are integer nanoseconds since the epoch, like everywhere in the API.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

NS = 1_000_000_000
FORMATS = ("swf", "xce")
FORMAT_VERSION = 1
#: SWF field 11: 1 completed, 0 failed, 5 cancelled (never ran).
STATUS_DONE, STATUS_FAILED, STATUS_CANCELLED = 1, 0, 5
#: A dependency on one job (``done(12)``, ``ended(12)``, a bare ``12``): SWF's "preceding job number".
_ONE_JOB = re.compile(r"(?:(?:done|ended|exit|started)\()?\s*([0-9]+)\s*\)?")


def preceding_job(depend: str | None) -> int:
    m = _ONE_JOB.fullmatch(depend.strip()) if depend else None
    return int(m.group(1)) if m else -1


def run_limit_s(row: dict[str, Any]) -> int | None:
    """The job's run limit in seconds (``xce submit -W``, or its queue's default), if it had one."""
    value = row.get("run_limit")
    return int(value) if value else None


class Numbering:
    """SWF numbers for names (1, 2, ... in order of first use), with the comment line naming each."""

    __slots__ = ("label", "numbers")

    def __init__(self, label: str, names: Iterable[str] = ()) -> None:
        self.label = label
        self.numbers: dict[str, int] = {}
        for n in names:
            self.numbers.setdefault(n, len(self.numbers) + 1)

    def header(self) -> list[str]:
        return [f"; {self.label}: {num} {name}" for name, num in self.numbers.items()]

    def number(self, name: str, out: list[str]) -> int:
        if not name:
            return -1
        num = self.numbers.get(name)
        if num is None:
            num = self.numbers[name] = len(self.numbers) + 1
            out.append(f"; {self.label}: {num} {name}")
        return num


def swf_header(*, cluster: str, version: str, since_ns: int, until_ns: int, hosts: int, slots: int,
               queues: Numbering, filters: dict[str, Any]) -> list[str]:
    base = since_ns // NS
    lines = [
        "; Version: 2.2",
        f"; Computer: XCE cluster {cluster}",
        f"; Installation: {cluster}",
        f"; Conversion: xce workload export (xce {version})",
        f"; Information: finished jobs submitted from {since_ns} to {until_ns} ns since the epoch"
        + "".join(f", {k} {v}" for k, v in filters.items() if v is not None),
        f"; UnixStartTime: {base}",
        "; TimeZoneString: UTC",
        f"; MaxNodes: {hosts}" if hosts else "; MaxNodes: -1",
        f"; MaxProcs: {slots}" if slots else "; MaxProcs: -1",
        "; Note: users, queues and job types are numbered in order of first use; '; User:' and '; JobType:'"
        " lines name them",
    ]
    if not hosts:  # a cluster with no host registered: leave the machine to the simulator's options
        lines = [line for line in lines if not line.startswith(("; MaxNodes", "; MaxProcs"))]
    return lines + queues.header()


def swf_line(row: dict[str, Any], base_s: int, users: Numbering, queues: Numbering, types: Numbering,
             out: list[str]) -> None:
    """Append the SWF line of one finished job (and the comment lines naming new numbers) to ``out``."""
    tasks = int(row["tasks"] or 1)
    submit = row["submit_time"] // NS
    if row["start_time"] is not None:
        wait = max(0, row["start_time"] // NS - submit)
        run = max(0, round((row["end_time"] - row["start_time"]) / NS)) if row["end_time"] is not None else -1
        status = STATUS_DONE if row["state"] == "DONE" else STATUS_FAILED
    else:
        wait = run = -1
        status = STATUS_CANCELLED
    peak, samples, declared = row.get("mem_peak"), row.get("mem_samples"), row.get("mem_declared")
    used_kb = peak // 1024 // tasks if peak and samples else -1
    req_kb = declared // 1024 // tasks if declared else -1
    limit = run_limit_s(row)
    user = users.number(row["user"], out)
    queue = queues.number(row["queue"], out)
    exe = types.number(row["job_type"] or "", out)
    fields = (row["id"], submit - base_s, wait, run, tasks, -1, used_kb, tasks, limit if limit else -1, req_kb,
              status, user, -1, exe, queue, -1, preceding_job(row.get("depend")), -1)
    out.append(" ".join(map(str, fields)))


def xce_header(*, cluster: str, version: str, since_ns: int, until_ns: int, hosts: int, slots: int,
               filters: dict[str, Any]) -> str:
    return json.dumps({"xce_workload": FORMAT_VERSION, "cluster": cluster, "exported_by": f"xce {version}",
                       "since": since_ns, "until": until_ns, "unix_start": since_ns // NS, "hosts": hosts,
                       "slots": slots, "filters": {k: v for k, v in filters.items() if v is not None}},
                      separators=(",", ":"))


_encode = json.JSONEncoder(separators=(",", ":")).encode


def xce_line(row: dict[str, Any], show_command: bool) -> str:
    """One job of the JSON-lines workload (see the module docstring), without its newline.

    The stored JSON texts (command, requests, limits) go in as they are, not decoded and encoded
    again: an export of 100,000 jobs spends its time here. ``show_command`` is the privacy rule's
    answer for this job (:func:`xce.controller.web.views.redact`)."""
    rec = {
        "jobid": row["id"], "user": row["user"], "queue": row["queue"], "project": row["project"],
        "job_type": row["job_type"], "priority": row["priority"], "tasks": row["tasks"],
        "request": row["request"], "sched_request": row["sched_request"], "run_limit": run_limit_s(row),
        "submit_time": row["submit_time"], "start_time": row["start_time"], "end_time": row["end_time"],
        "state": row["state"], "exit_code": row["exit_code"],
        "mem_declared": row.get("mem_declared"), "mem_peak": row.get("mem_peak") if row.get("mem_samples") else None,
    }
    if row.get("array_id") is not None:
        rec["array_id"], rec["array_index"] = row["array_id"], row["array_index"]
    if row.get("name"):
        rec["name"] = row["name"]
    if row.get("depend"):
        rec["dependencies"] = row["depend"]  # as stored: every job named by its id (xce.controller.jobs.depend)
    if row.get("begin_time"):
        rec["begin_time"] = row["begin_time"]
    command = (row.get("command") or "null") if show_command else "null"
    return (f'{_encode(rec)[:-1]},"requests":{row.get("requests") or "{}"},"limits":{row.get("limits") or "{}"},'
            f'"command":{command}}}')
