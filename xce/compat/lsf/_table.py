"""``bjobs -o "FIELD[:[-]WIDTH] ... [delimiter='C']"``, ``-noheader``, ``-w`` and ``-json``: LSF's
field names, default widths and layout, for whichever program lists jobs.

As LSF's ``-o``: a field named alone has unlimited width (padded to its recommended width, never
cut), ``FIELD:`` has its recommended width, ``FIELD:W`` at most W characters; a longer value is cut
at its end, except ``JOB_NAME``, whose start LSF replaces with ``*``; ``-w`` cuts nothing, nor is a
job id ever cut (a clipped id names another job). Values are
left-justified (``:-W`` right-justifies), columns one space apart, the last one not padded (a
client matching ``RUN$`` finds it); an empty value is ``-``. With a delimiter the values are joined
by it, unpadded. ``-json`` writes LSF's layout: ``{"COMMAND":"bjobs","JOBS":n,"RECORDS":[...]}``
with the field names upper-case as keys and every value a string (empty, never ``-``).
"""

from __future__ import annotations

from xce.compat.lsf import _jobs, _states
from xce.compat.lsf._args import Usage
from xce.formats import lsf_short, printable


def _exec_host(job: dict) -> str:
    return ":".join(_jobs.hosts(job))


def _pend_reason(job: dict) -> str:
    if job["state"] != "PEND":
        return ""
    reasons = job.get("pend_reasons") or []
    return reasons[0].get("text", "") if reasons else "New job is waiting for scheduling"


def _cpu_used(job: dict) -> str:
    """``0.950 second(s)``: CPU time to the millisecond; empty where never measured."""
    ms = (job.get("used") or {}).get("cpu_ms")
    return "" if ms is None else f"{ms / 1000:.3f} second(s)"


def _mem(job: dict, key: str) -> str:
    from xce.compat.lsf._long import memory

    value = (job.get("used") or {}).get(key)
    return "" if value is None else memory(value)


def _run_time(job: dict) -> str:
    return f"{_jobs.run_seconds(job)} second(s)" if job.get("start_time") else ""


#: field -> (header, default width, the columns of a job its value is made of, value). Aliases map to
#: these names.
FIELDS = {
    "jobid": ("JOBID", 7, "array_id array_index", _jobs.job_id),
    "jobindex": ("JOBINDEX", 8, "array_index", lambda j: str(j.get("array_index") or 0)),
    "stat": ("STAT", 5, "state held_by", _states.stat),
    "user": ("USER", 7, "user", lambda j: j["user"]),
    "queue": ("QUEUE", 10, "queue", lambda j: j["queue"]),
    "job_name": ("JOB_NAME", 10, "name command array_index", _jobs.job_name),
    "proj_name": ("PROJ_NAME", 11, "project", lambda j: j.get("project") or ""),
    "command": ("COMMAND", 15, "command", _jobs.command_text),
    "from_host": ("FROM_HOST", 11, "submit_host", lambda j: j.get("submit_host") or ""),
    "exec_host": ("EXEC_HOST", 11, "placement", _exec_host),
    "first_host": ("FIRST_HOST", 11, "placement", lambda j: (j.get("placement") or [{}])[0].get("host", "")),
    "nexec_host": ("NEXEC_HOST", 10, "placement", lambda j: str(len(j.get("placement") or [])) if j.get("placement") else ""),
    "slots": ("SLOTS", 5, "tasks", lambda j: str(j["tasks"])),
    "nalloc_slot": ("NALLOC_SLOT", 10, "tasks placement", lambda j: str(j["tasks"]) if j.get("placement") else ""),
    "nreq_slot": ("NREQ_SLOT", 10, "tasks", lambda j: str(j["tasks"])),
    "min_req_proc": ("MIN_REQ_PROC", 12, "tasks", lambda j: str(j["tasks"])),
    "max_req_proc": ("MAX_REQ_PROC", 12, "tasks", lambda j: str(j["tasks"])),
    "submit_time": ("SUBMIT_TIME", 15, "submit_time", lambda j: lsf_short(j.get("submit_time"))),
    "start_time": ("START_TIME", 15, "start_time", lambda j: lsf_short(j.get("start_time"))),
    "finish_time": ("FINISH_TIME", 16, "end_time", lambda j: lsf_short(j.get("end_time"))),
    "run_time": ("RUN_TIME", 15, "start_time end_time", _run_time),
    "%complete": ("%COMPLETE", 11, "", lambda j: ""),
    "job_priority": ("JOB_PRIORITY", 12, "priority", lambda j: str(j.get("priority", ""))),
    "exit_code": ("EXIT_CODE", 9, "state exit_code exit_signal end", _states.exit_code),
    "exit_reason": ("EXIT_REASON", 50, "end user reason", _states.exit_reason),
    "kill_reason": ("KILL_REASON", 50, "", lambda j: ""),
    "suspend_reason": ("SUSPEND_REASON", 50, "state reason",
                       lambda j: (j.get("reason") or "") if j["state"] in ("USUSP", "SSUSP") else ""),
    "pend_reason": ("PEND_REASON", 11, "state pend_reasons", _pend_reason),
    "dependency": ("DEPENDENCY", 15, "", lambda j: ""),
    "sub_cwd": ("SUB_CWD", 10, "cwd", lambda j: j.get("cwd") or ""),
    "exec_cwd": ("EXEC_CWD", 10, "cwd start_time", lambda j: (j.get("cwd") or "") if j.get("start_time") else ""),
    "runtimelimit": ("RUNTIMELIMIT", 12, "run_limit", lambda j: f"{j['run_limit'] / 60:.1f}" if j.get("run_limit") else ""),
    # What the job used (a parse of its usage on the controller: read only for these).
    "cpu_used": ("CPU_USED", 10, "used", lambda j: _cpu_used(j)),
    "mem": ("MEM", 15, "used", lambda j: _mem(j, "mem_now")),
    "max_mem": ("MAX_MEM", 15, "used", lambda j: _mem(j, "mem_peak")),
    "avg_mem": ("AVG_MEM", 15, "used", lambda j: _mem(j, "mem_avg")),
    # Figures the listing does not carry: shown empty, never refused.
    **{name: (name.upper(), width, "", lambda j: "") for name, width in (
        ("memlimit", 10), ("swap", 15),
        ("time_left", 11), ("output_file", 11), ("error_file", 10), ("job_description", 17),
        ("user_group", 15), ("job_group", 10), ("application", 13), ("service_class", 13),
        ("estimated_start_time", 20))},
}
ALIASES = {"id": "jobid", "name": "job_name", "cmd": "command", "proj": "proj_name", "project": "proj_name",
           "priority": "job_priority"}
#: bjobs' own columns (its default output, and -json without -o).
DEFAULT = ("jobid", "user", "stat", "queue", "from_host", "exec_host", "job_name", "submit_time")


def needs(columns: list["Column"]) -> set[str]:
    """The columns of each job that ``columns`` print (what the listing reads)."""
    return {n for c in columns for n in FIELDS[c.field][2].split()}


class Column:
    """A field as ``-o`` asks for it: ``width`` pads it, ``limit`` (None: unlimited) cuts it."""

    __slots__ = ("field", "header", "width", "limit", "right", "value")

    def __init__(self, field: str, width: int | None = None, right: bool = False, limited: bool = False) -> None:
        self.field = field
        self.header, default, _, self.value = FIELDS[field]
        self.width = default if width is None else width
        self.limit = self.width if limited or width is not None else None
        self.right = right


def parse_format(text: str) -> tuple[list[Column], str | None]:
    """``-o``'s text: its columns and the delimiter (None: padded columns)."""
    delimiter = None
    body = text
    at = text.find("delimiter=")
    if at >= 0:
        spec = text[at + len("delimiter="):].strip()
        quote = spec[:1]
        if quote in ("'", '"') and spec.find(quote, 1) > 0:
            delimiter = spec[1:spec.find(quote, 1)]
        else:
            delimiter = spec.split()[0] if spec else ""
        if not delimiter:
            raise Usage(f"delimiter: the delimiter in -o \"{text}\" is empty")
        body = text[:at]
    columns = []
    for word in body.split():
        name, colon, width = word.partition(":")
        field = ALIASES.get(name.lower(), name.lower())
        if field not in FIELDS:
            raise Usage(f"{name}: Illegal field name in -o")
        right = width.startswith("-")
        digits = width.lstrip("-").rstrip("SKMGTPE")
        if width and not digits.isdigit():
            raise Usage(f"{word}: Illegal field width in -o")
        columns.append(Column(field, int(digits) if digits else None, right, limited=bool(colon)))
    if not columns:
        raise Usage(f"-o \"{text}\": no field named")
    return columns, delimiter


def cell(value: str, column: Column, wide: bool, last: bool = False) -> str:
    """One column's text: cut to its limit (as LSF cuts it), then padded, the last one not on the right."""
    value = value or "-"
    if column.limit is not None and len(value) > column.limit and not wide and column.field != "jobid":
        value = "*" + value[len(value) - column.limit + 1:] if column.field == "job_name" else value[:column.limit]
    if column.right:
        return value.rjust(column.width)
    return value if last else value.ljust(column.width)


def lines(columns: list[Column], jobs: list[dict], *, header: bool, delimiter: str | None, wide: bool) -> list[str]:
    out = []
    end = len(columns) - 1
    if header:
        out.append(delimiter.join(c.header for c in columns) if delimiter is not None else
                   " ".join(cell(c.header, c, True, i == end) for i, c in enumerate(columns)))
    for job in jobs:
        values = [printable(c.value(job)) for c in columns]  # escaped before widths are counted
        if delimiter is not None:
            out.append(delimiter.join(v or "-" for v in values))
        else:
            out.append(" ".join(cell(v, c, wide, i == end) for i, (c, v) in enumerate(zip(columns, values, strict=True))))
    return out


def _string(text: str) -> str:
    """A JSON string (``wirejson``: the C codec, without ``import json`` and its regular expressions)."""
    from xce.wirejson import dumps

    return dumps(text)


def json_text(command: str, columns: list[Column], jobs: list[dict], missing: list[str]) -> str:
    """LSF's ``-json``: two-space indents, ``"KEY":"VALUE"`` with no space, values as strings."""
    records = [[(c.header, c.value(j)) for c in columns] for j in jobs]
    records += [[("JOBID", text), ("ERROR", f"Job <{text}> is not found")] for text in missing]
    body = ",\n".join("    {\n" + ",\n".join(f"      {_string(k)}:{_string(v)}" for k, v in rec) + "\n    }"
                      for rec in records)
    return (f'{{\n  "COMMAND":{_string(command)},\n  "JOBS":{len(records)},\n  "RECORDS":[\n'
            + (body + "\n" if body else "") + "  ]\n}\n")
