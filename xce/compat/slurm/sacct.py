"""``sacct``: jobs and their steps as Slurm's accounting lists them, in one request.

A job is a row, followed (unless ``-X``) by the rows of its ``batch`` step (the script) and its
``extern`` step (the allocation), as sacct shows a batch job. Without ``-j`` it lists the caller's
jobs active since 00:00 today (``-S``/``-E`` change the window; ``-a``/``-u`` the users).

What a job used is a step's figure, as Slurm gathers it: ``MaxRSS``/``AveRSS`` in kilobytes on the
batch step (``--units`` converts), ``TotalCPU``/``UserCPU``/``SystemCPU`` as ``MM:SS.mmm`` on the job
and its batch step; ``ReqMem``, ``ReqTRES`` and ``AllocTRES`` are the whole job's.
"""

from __future__ import annotations

import sys
import time

from xce.compat.slurm import _format as fmt, _ids as ids, _states as states, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "sacct"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SACCT.getopt()
REFUSED = {"yaml": "YAML output is not offered here: use -P or --json"}

DEFAULT = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
BRIEF = "JobID,State,ExitCode"
LONG = ("JobID,JobIDRaw,JobName,Partition,Account,User,AllocCPUS,NNodes,NodeList,Submit,Start,End,Elapsed,"
        "Timelimit,State,ExitCode,Reason,WorkDir")


def _step_state(job: dict, step: str) -> str:
    word = states.word(job)
    if step == "extern":
        return word if word in ("RUNNING", "SUSPENDED") else "COMPLETED"
    if word in ("TIMEOUT", "CANCELLED"):
        return "CANCELLED"
    return word


def _state(job: dict, step: str | None) -> str:
    if step is not None:
        return _step_state(job, step)
    word = states.word(job)
    if word == "CANCELLED":
        by = (job.get("end") or {}).get("by")
        return f"CANCELLED by {_uid(by)}" if by else word
    return word


def _uid(user: str | None) -> int:
    import pwd

    try:
        return pwd.getpwnam(user or "").pw_uid
    except KeyError:
        return 0


def _exit(job: dict, step: str | None) -> str:
    if step == "extern":
        return "0:0"
    return states.exit_code(job)


def _jobid(job: dict, step: str | None, raw: bool) -> str:
    head = str(job["jobid"]) if raw else ids.shown(job)
    return head if step is None else f"{head}.{step}"


#: ``--units`` (MaxRSS/AveRSS in that unit) and ``--noconvert`` (ReqMem in megabytes), for this run.
UNITS: dict = {"rss": None, "exact": False}
#: The columns every listing reads: the state (``-s``) and partition (``-r``) filters, the job's id and
#: whether it started (its steps).
_ALWAYS = ("jobid", "state", "end", "queue", "start_time")


def _used(job: dict) -> dict:
    return job.get("used") or {}


def _rss(job: dict, step: str | None, key: str) -> str:
    """Memory is a step's figure, as Slurm's accounting gathers it: the batch step carries the job's
    (the allocation's own line is empty, its ``extern`` step holds nothing: 0)."""
    if step == "extern":
        return "0"
    return fmt.rss(_used(job).get(key), UNITS["rss"]) if step == "batch" else ""


def _cpu(job: dict, step: str | None, key: str) -> str:
    """CPU time: the job's line is the sum of its steps', which is the batch step's here."""
    if step == "extern":
        return fmt.cpu_time(0)
    return fmt.cpu_time(_used(job).get(key))


def _ntasks(job: dict, step: str | None) -> str:
    """Tasks: the job's (its slots over its CPUs per task); the batch step runs the script, one task;
    the extern step has one per node."""
    if step == "batch":
        return "1"
    if step == "extern":
        return str(len(fmt.nodes(job)) or 1)
    return str(max(1, int(job["tasks"]) // int(job.get("cpus_per_task") or 1)))


def _elapsed(job: dict, now: float) -> float:
    return fmt.used(job, now)


def _nodes(job: dict, step: str | None) -> str:
    hosts = fmt.nodes(job)
    if not hosts:
        return "None assigned"
    return hosts[0] if step == "batch" else ",".join(hosts)


def _cpus(job: dict, step: str | None) -> str:
    placement = job.get("placement") or []
    if job.get("start_time") is None:
        return "0" if job["state"] != "PEND" else str(job["tasks"])
    if step == "batch" and placement:
        return str(placement[0]["tasks"])
    return str(job["tasks"])


#: Field name -> (width: negative left-justifies, the columns of a job its value is made of, value of (job,
#: step or None, now)).
FIELDS = {
    "Account": (10, "project", lambda j, s, n: j.get("project") or ""),
    "AllocCPUS": (10, "state start_time tasks placement", lambda j, s, n: _cpus(j, s)),
    "AllocNodes": (10, "placement", lambda j, s, n: str(len(fmt.nodes(j)))),
    "ArrayJobID": (15, "array_id", lambda j, s, n: ids.array_job(j) if j.get("array_id") is not None else ""),
    "ArrayTaskID": (15, "array_index", lambda j, s, n: str(j["array_index"]) if j.get("array_index") is not None else ""),
    "Comment": (-12, "", lambda j, s, n: ""),
    "CPUTime": (10, "end_time state start_time tasks placement", lambda j, s, n: fmt.elapsed(_elapsed(j, n) * int(_cpus(j, s)))),
    "DerivedExitCode": (10, "exit_code exit_signal end", lambda j, s, n: states.exit_code(j) if s is None else ""),
    "Elapsed": (10, "start_time end_time", lambda j, s, n: fmt.elapsed(_elapsed(j, n))),
    "ElapsedRaw": (10, "start_time end_time", lambda j, s, n: str(int(_elapsed(j, n)))),
    "Eligible": (19, "begin_time submit_time", lambda j, s, n: fmt.clock(j.get("begin_time") or j.get("submit_time"), "Unknown")),
    "End": (19, "end_time", lambda j, s, n: fmt.clock(j.get("end_time"), "Unknown")),
    "ExitCode": (8, "exit_code exit_signal end", lambda j, s, n: _exit(j, s)),
    "Group": (9, "user", lambda j, s, n: _group(j["user"])),
    "JobID": (-12, "array_id array_index", lambda j, s, n: _jobid(j, s, False)),
    "JobIDRaw": (-12, "", lambda j, s, n: _jobid(j, s, True)),
    "JobName": (10, "name command", lambda j, s, n: s if s is not None else (j.get("name") or _command_name(j))),
    "AllocTRES": (10, "placement tasks requests", lambda j, s, n: fmt.tres(j, True) if s != "extern" else ""),
    "AveRSS": (10, "used", lambda j, s, n: _rss(j, s, "mem_avg")),
    "MaxRSS": (10, "used", lambda j, s, n: _rss(j, s, "mem_peak")),
    "NTasks": (8, "placement tasks cpus_per_task", lambda j, s, n: _ntasks(j, s)),
    "ReqTRES": (10, "placement tasks requests", lambda j, s, n: fmt.tres(j, False) if s is None else ""),
    "SystemCPU": (10, "used", lambda j, s, n: _cpu(j, s, "cpu_sys_ms")),
    "UserCPU": (10, "used", lambda j, s, n: _cpu(j, s, "cpu_user_ms")),
    "NCPUS": (10, "state start_time tasks placement", lambda j, s, n: _cpus(j, s)),
    "NNodes": (8, "placement", lambda j, s, n: str(len(fmt.nodes(j)) or 1) if s != "batch" else "1"),
    "NodeList": (15, "placement", lambda j, s, n: _nodes(j, s)),
    "Partition": (10, "queue", lambda j, s, n: j["queue"] if s is None else ""),
    "Priority": (10, "priority", lambda j, s, n: str(j.get("priority") or 0) if s is None else ""),
    "QOS": (10, "", lambda j, s, n: "normal" if s is None else ""),
    "Reason": (20, "state pend_category held_by user pend_reasons",
               lambda j, s, n: states.wait_reason(j) if s is None else ""),
    "ReqCPUS": (8, "tasks", lambda j, s, n: str(j["tasks"])),
    "ReqMem": (10, "requests tasks", lambda j, s, n: fmt.memory(fmt.mem_per_slot(j) * j["tasks"], UNITS["exact"])),
    "Reserved": (10, "start_time submit_time", lambda j, s, n: fmt.elapsed(((j.get("start_time") or n * 1e9) - j["submit_time"]) / 1e9)
                 if s is None else ""),
    "Start": (19, "start_time", lambda j, s, n: fmt.clock(j.get("start_time"), "Unknown")),
    "State": (10, "end", lambda j, s, n: _state(j, s)),
    "Submit": (19, "submit_time", lambda j, s, n: fmt.clock(j.get("submit_time"), "Unknown")),
    "Suspended": (10, "", lambda j, s, n: "00:00:00"),
    "TotalCPU": (10, "used", lambda j, s, n: _cpu(j, s, "cpu_ms")),
    "Timelimit": (10, "run_limit", lambda j, s, n: ("UNLIMITED" if not j.get("run_limit") else fmt.elapsed(j["run_limit"]))
                  if s is None else ""),
    "TimelimitRaw": (10, "run_limit", lambda j, s, n: (str(j["run_limit"] // 60) if j.get("run_limit") else "UNLIMITED")
                     if s is None else ""),
    "UID": (6, "user", lambda j, s, n: str(_uid(j["user"])) if s is None else ""),
    "User": (9, "user", lambda j, s, n: j["user"] if s is None else ""),
    "WorkDir": (30, "cwd", lambda j, s, n: (j.get("cwd") or "") if s is None else ""),
}


def _group(user: str) -> str:
    import grp
    import pwd

    try:
        return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name
    except KeyError:
        return ""


def _command_name(j: dict) -> str:
    return (j.get("command") or [""])[0].rpartition("/")[2]


def _helpformat() -> str:
    names = sorted(FIELDS, key=str.lower)
    lines = []
    for i in range(0, len(names), 4):
        lines.append("".join(f"{n:<20}" for n in names[i:i + 4]).rstrip())
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    UNITS.update(rss=None, exact=False)

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
        if operands:
            return _err(f"Unknown arguments: {' '.join(operands)}")
    except UsageError as exc:
        return refuse(PROG, str(exc))
    steps, header, parsable, delim = True, True, None, "|"
    fields_text, refs, names, users = DEFAULT, [], [], []
    everyone = False
    start_text = end_text = None
    wanted: set[str] | None = None
    partitions: list[str] = []
    as_json = False
    try:
        for name, value in opts:
            if name in REFUSED:
                return _err(REFUSED[name])
            if name == "json":
                from xce.compat.slurm import _json

                if value and value.strip() != _json.PARSER:
                    return _err(f"--json={value}: only data_parser {_json.PARSER} (Slurm 23.02's) is offered here")
                as_json = True
            elif name == "allocations":
                steps = False
            elif name == "parsable2":
                parsable = "nolast"
            elif name == "parsable":
                parsable = "last"
            elif name == "noheader":
                header = False
            elif name == "format":
                fields_text = value or ""
                fmt.field_list(fields_text, FIELDS)
            elif name == "brief":
                fields_text = BRIEF
            elif name == "long":
                fields_text = LONG
            elif name == "jobs":
                refs += ids.split_list([value or ""])
            elif name == "starttime":
                start_text = value
            elif name == "endtime":
                end_text = value
            elif name == "name":
                names += [n for n in (value or "").split(",") if n]
            elif name in ("user", "uid"):
                users += [u.strip() for u in (value or "").split(",") if u.strip()]
            elif name == "allusers":
                everyone = True
            elif name == "helpformat":
                sys.stdout.write(_helpformat())
                return 0
            elif name == "state":
                wanted, bad = states.parse_states(value or "")
                if bad:
                    return _err(f"Invalid state specified: {bad}")
            elif name == "delimiter":
                delim = value or "|"
            elif name == "units":
                unit = (value or "").strip().upper()
                if unit not in ("K", "M", "G", "T", "P"):
                    return _err(f"Invalid unit type: {value}")
                UNITS["rss"] = unit
            elif name == "noconvert":
                UNITS["exact"] = True
            elif name == "partition":
                partitions += [p.strip() for p in (value or "").split(",") if p.strip()]
            elif name in ("help", "usage"):
                tables.show_help(PROG, {name}, REFUSED)
                return 0
            elif name == "version":
                sys.stdout.write("slurm 22.05.8\n")
                return 0
        fields = fmt.field_list(fields_text, FIELDS)
    except UsageError as exc:
        return _err(str(exc))
    bad = ids.check(PROG, refs)
    if bad is not None:
        return _err(f"Invalid job id: {bad}")
    now = time.time()
    since = until = None
    if start_text is not None:
        since = fmt.parse_date(start_text, now)
        if since is None:
            return _err(f"Invalid time specification (pos=0): {start_text}")
    elif not refs:  # Slurm's defaults: 00:00 today; with -s, now (the jobs in those states now)
        since = fmt.parse_date("midnight", now) if wanted is None else now
    if end_text is not None:
        until = fmt.parse_date(end_text, now)
        if until is None:
            return _err(f"Invalid time specification (pos=0): {end_text}")
    if since is not None and until is not None and until < since:
        return _err("Start time requested is after end time.")
    params = {"all": True, "job": refs or None, "name": names or None,
              "user": "all" if everyone else (users or None),
              "since": None if since is None else max(0, int(since)),
              "until": None if until is None else int(until) + 1,
              "queue": partitions[0] if len(partitions) == 1 else None}
    columns = None if as_json else sorted({*_ALWAYS, *(n for f, _ in fields for n in FIELDS[f][1].split())})
    try:
        answer = _api.jobs(_api.client(), columns, **params)
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    found = [j for j in answer["jobs"] if (wanted is None or states.word(j) in wanted)
             and (not partitions or j["queue"] in partitions)]
    if as_json:
        from xce.compat.slurm import _json

        return _json.write(PROG, found, _json.sacct_job, now)
    out = []
    widths = [w for _, w in fields]
    if header:
        out.append(_row([f for f, _ in fields], widths, parsable, delim) if parsable is not None else
                   "".join(fmt.cell(f, abs(w), w > 0) + " " for f, w in fields))
        if parsable is None:
            out.append(" ".join("-" * abs(w) for _, w in fields) + " ")
    values = [FIELDS[f][2] for f, _ in fields]
    for j in found:
        out.append(_row([value(j, None, now) for value in values], widths, parsable, delim))
        if steps and j.get("start_time") is not None:
            for step in ("batch", "extern"):
                out.append(_row([value(j, step, now) for value in values], widths, parsable, delim))
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return 0


def _row(cells: list[str], widths: list[int], parsable: str | None, delim: str) -> str:
    if parsable is None:
        return "".join(fmt.sacct_cell(v, w) + " " for v, w in zip(cells, widths, strict=True))
    text = delim.join(cells)
    return text + delim if parsable == "last" else text


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
