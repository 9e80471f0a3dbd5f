"""``squeue``: the jobs in the system, as Slurm lists them (``-o`` codes, ``-O`` fields, states).

One request: ids, users, names, states and the MinJobAge window are filtered by the controller.
Ended jobs show only when ``-t`` asks for them (``-t all``, ``-t CD``), and then while younger than
MinJobAge: Slurm's squeue filters states in the client, ``-j`` or not, so a tool polling
``squeue -j ID`` sees its job disappear when it ends. ``-j`` of one job that is not there (or aged
out) is Slurm's error. A ``-o`` format is printed as given, quotes and all.
"""

from __future__ import annotations

import sys
import time

from xce.compat.slurm import _format as fmt, _ids as ids, _states as states, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse
from xce.formats import slurm_banner

PROG = "squeue"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SQUEUE.getopt()
#: Options Slurm has that this one refuses: their answers would be wrong here.
REFUSED = {"steps": "job steps are not listed by this cluster", "iterate": "use watch(1) to repeat squeue",
           "start": "this cluster does not forecast start times"}

DEFAULT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
LONG = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"

#: ``-o`` codes: (title, the columns of a job its value is made of, value of (job, now)).
CODES = {
    "i": ("JOBID", "jobid array_id array_index", lambda j, n: j["_shown"]),
    "A": ("JOBID", "jobid", lambda j, n: str(j["jobid"])),
    "F": ("ARRAY_JOB_ID", "jobid array_id", lambda j, n: ids.array_job(j)),
    "K": ("ARRAY_TASK_ID", "array_index", lambda j, n: j["_task"]),
    "a": ("ACCOUNT", "project", lambda j, n: j.get("project") or ""),
    "t": ("ST", "state end", lambda j, n: states.code(j)),
    "T": ("STATE", "state end", lambda j, n: states.word(j)),
    "j": ("NAME", "name command", lambda j, n: fmt.job_name(j)),
    "u": ("USER", "user", lambda j, n: j["user"]),
    "U": ("UID", "user", lambda j, n: str(fmt.uid(j["user"]))),
    "P": ("PARTITION", "queue", lambda j, n: j["queue"]),
    "M": ("TIME", "start_time end_time", lambda j, n: fmt.duration(fmt.used(j, n))),
    "l": ("TIME_LIMIT", "run_limit", lambda j, n: fmt.limit(j.get("run_limit"))),
    "L": ("TIME_LEFT", "run_limit start_time end_time", lambda j, n: _left(j, n)),
    "D": ("NODES", "placement", lambda j, n: str(len(fmt.nodes(j)) or 1)),
    "C": ("CPUS", "tasks", lambda j, n: str(j["tasks"])),
    "R": ("NODELIST(REASON)", "state pend_category held_by user pend_reasons placement end exit_code exit_signal", lambda j, n: _where(j)),
    "r": ("REASON", "state pend_category held_by user pend_reasons end exit_code exit_signal", lambda j, n: states.reason(j)),
    "N": ("NODELIST", "placement", lambda j, n: ",".join(fmt.nodes(j))),
    "B": ("EXEC_HOST", "placement", lambda j, n: (fmt.nodes(j) or ["n/a"])[0]),
    "S": ("START_TIME", "start_time", lambda j, n: fmt.clock(j.get("start_time"))),
    "V": ("SUBMIT_TIME", "submit_time", lambda j, n: fmt.clock(j.get("submit_time"))),
    "e": ("END_TIME", "end_time", lambda j, n: fmt.clock(j.get("end_time"))),
    "Z": ("WORK_DIR", "cwd", lambda j, n: j.get("cwd") or ""),
    "m": ("MIN_MEMORY", "requests", lambda j, n: fmt.memory(fmt.mem_per_slot(j))),
    "b": ("TRES_PER_NODE", "", lambda j, n: "N/A"),
    "Q": ("PRIORITY", "priority", lambda j, n: str(j.get("priority") or 0)),
    "p": ("PRIORITY", "priority", lambda j, n: f"{float(j.get('priority') or 0):.8f}"),
    "o": ("COMMAND", "command", lambda j, n: " ".join(j.get("command") or [])),
    "q": ("QOS", "", lambda j, n: "normal"),
    "c": ("MIN_CPUS", "cpus_per_task", lambda j, n: str(j.get("cpus_per_task") or 1)),
    "E": ("DEPENDENCY", "", lambda j, n: "(null)"),
    "h": ("OVER_SUBSCRIBE", "", lambda j, n: "OK"),
}
#: ``-O`` names (case-insensitive) -> the ``-o`` code printing the same.
FIELDS = {"jobarrayid": "i", "jobid": "A", "statecompact": "t", "state": "T", "reason": "r", "name": "j",
          "username": "u", "userid": "U", "partition": "P", "timeused": "M", "timelimit": "l", "timeleft": "L",
          "numnodes": "D", "numcpus": "C", "nodelist": "N", "arrayjobid": "F", "arraytaskid": "K",
          "starttime": "S", "submittime": "V", "endtime": "e", "workdir": "Z", "account": "a", "command": "o",
          "priority": "p", "prioritylong": "Q", "qos": "q", "minmemory": "m", "tres-per-node": "b",
          "batchhost": "B", "dependency": "E", "mincpus": "c", "oversubscribe": "h"}
#: ``-O`` titles where they are not the ``-o`` code's.
FIELD_TITLES = {"jobarrayid": "JOBID", "nodelist": "NODELIST", "reason": "REASON", "username": "USER",
                "arraytaskid": "ARRAY_TASK_ID", "prioritylong": "PRIORITY"}


def _left(j: dict, now: float) -> str:
    lim = j.get("run_limit")
    if not lim:
        return "UNLIMITED"
    return fmt.duration(lim - fmt.used(j, now))


#: The states whose ``%R`` is the reason rather than the nodes (squeue's ``_print_job_reason_list``).
REASON_NOT_NODES = {"PENDING", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "FAILED"}


def _where(j: dict) -> str:
    if states.word(j) in REASON_NOT_NODES:
        return f"({states.reason(j)})"
    return ",".join(fmt.nodes(j)) or f"({states.reason(j)})"


def _format(text: str) -> list[fmt.Part]:
    """``-o`` text as parts (:func:`xce.compat.slurm._format.percent_codes`); UsageError for an unknown code."""
    try:
        return fmt.percent_codes(text, CODES, "job")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _fields(text: str) -> list[fmt.Part]:
    """``-O`` text as parts (:func:`xce.compat.slurm._format.fields_format`); UsageError for an unknown name."""
    try:
        return fmt.fields_format(text, FIELDS, FIELD_TITLES, "job")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _template(parts) -> tuple[str, list[str], list]:
    """The format as one ``%`` template, ``fmt.cell``'s rule (a width pads and cuts, ``.`` right-justifies)
    written as ``%-8.8s``/``%18.18s``, with the titles and the value functions of its codes: a line is
    one formatting however many columns, which is what 10,000 lines of ``squeue -r`` cost."""
    text, titles, values = [], [], []
    for lit, code_, width, right in parts:
        if code_ is None:
            text.append(lit.replace("%", "%%"))
            continue
        text.append(f"%{'' if right else '-'}{width}.{width}s" if width else "%s")
        titles.append(lit or CODES[code_][0])
        values.append(CODES[code_][2])
    return "".join(text), titles, values


#: The columns every listing reads: the state filter (``-t``), ``-p`` of several partitions, the job id.
_ALWAYS = ("jobid", "state", "end", "queue", "array_id", "array_index")


def _columns(parts, collapse: bool) -> list[str]:
    """The columns of each job the format prints (:data:`CODES`), and what squeue itself reads."""
    names = set(_ALWAYS) | {n for _, code_, _, _ in parts if code_ is not None for n in CODES[code_][1].split()}
    if collapse:
        names |= {"array_indexes", "array_limit"}
    return sorted(names)


def _collapse(jobs: list[dict]) -> list[dict]:
    """Pending elements of one array as one line, ``A_[1-5]``, as squeue shows them without ``-r``
    (the controller has done it, ``collapse``, when the answer says ``array_indexes``)."""
    from xce.jobref import format_indexes

    out: list[dict] = []
    pending: dict[int, dict] = {}
    for j in jobs:
        j["_shown"], j["_task"] = ids.shown(j), ids.array_task(j)
        if j.get("array_indexes") is not None:  # collapsed by the controller
            group = pending[j["array_id"]] = {**j, "_indexes": j["array_indexes"]}
            out.append(group)
            continue
        if j.get("array_id") is None or j["state"] != "PEND":
            out.append(j)
            continue
        group = pending.get(j["array_id"])
        if group is None:
            group = pending[j["array_id"]] = {**j, "_indexes": []}
            out.append(group)
        group["_indexes"].append(j["array_index"])
    for group in pending.values():
        if len(group["_indexes"]) > 1:
            text = format_indexes(sorted(group["_indexes"]))
            limit = f"%{group['array_limit']}" if group.get("array_limit") else ""
            group["_shown"], group["_task"] = f"{group['array_id']}_[{text}{limit}]", text + limit
    return out


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    if operands and any(n == "jobs" for n, _ in opts):  # squeue -j 12: the first operand is -j's list
        opts.append(("jobs", operands.pop(0)))
    if operands:
        return _err(f"Unrecognized option: {operands[0]}")
    header, parts, long_, as_json = True, None, False, False
    users: list[str] = []
    me = False
    refs: list[str] = []
    names: list[str] = []
    partitions: list[str] = []
    wanted: set[str] | None = set(states.DEFAULT_SQUEUE)
    states_given = False
    try:
        for name, value in opts:
            if name in REFUSED:
                return _err(f"--{name}: {REFUSED[name]}")
            if name == "noheader":
                header = False
            elif name == "format":
                parts = _format(value or "")
            elif name == "Format":
                parts = _fields(fmt.unquote(value or ""))
            elif name == "states":
                wanted, bad = states.parse_states(value or "")
                if bad:
                    return _err(f"Invalid job state specified: {bad}")
                states_given = True
            elif name == "user":
                users += [u.strip() for u in (value or "").split(",") if u.strip()]
            elif name == "me":
                me = True
            elif name == "jobs":
                refs += ids.split_list([value or ""])
            elif name == "name":
                names += [n for n in (value or "").split(",") if n]
            elif name == "partition":
                partitions += [p.strip() for p in (value or "").split(",") if p.strip()]
            elif name == "long":
                long_ = True
            elif name == "json":
                as_json = True
            elif name in ("help", "usage"):
                tables.show_help(PROG, {name}, REFUSED)
                return 0
            elif name == "version":
                sys.stdout.write("slurm 22.05.8\n")
                return 0
    except UsageError as exc:
        return _err(str(exc))
    collapse = not any(n == "array" for n, _ in opts)  # -r: one line per element
    if parts is None:
        parts = _format(LONG if long_ else DEFAULT)
    bad = ids.check(PROG, refs)
    if bad is not None:
        return _err(f"Invalid job id: {bad}")
    now = time.time()
    params: dict = {"user": None if me else (users or "all"), "job": refs or None, "name": names or None,
                    "queue": partitions[0] if len(partitions) == 1 else None, "collapse": "true" if collapse and not as_json else None}
    ended = wanted is None or bool(wanted - set(states.DEFAULT_SQUEUE))
    if refs or ended:  # ended jobs are known while younger than MinJobAge (shown only when -t asks)
        params["since"] = int(now) - _api.MIN_JOB_AGE
    if wanted is not None and not (refs and not states_given):  # -j ID of an ended job: known, not shown
        params["state"] = ",".join(sorted({x for w in wanted for x in _XCE.get(w, ())})) or "PEND"
    try:
        c = _api.client()
        answer = _api.jobs(c, None if as_json else _columns(parts, collapse), **params)
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    found = answer["jobs"]
    if refs and len(refs) == 1 and not found:
        sys.stderr.write("slurm_load_jobs error: Invalid job id specified\n")
        return 1
    found = [j for j in found if (wanted is None or states.word(j) in wanted)
             and (not partitions or j["queue"] in partitions)]
    if as_json:
        from xce.compat.slurm import _json

        return _json.write(PROG, found, _json.squeue_job, now)
    if collapse:
        rows = _collapse(found)
    else:
        rows = found
        for j in rows:
            j["_shown"], j["_task"] = ids.shown(j), ids.array_task(j)
    template, titles, values = _template(parts)
    out = []
    if long_:
        out.append(slurm_banner(now))
    if header:
        out.append(template % tuple(titles))
    out += [template % tuple([value(j, now) for value in values]) for j in rows]
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return 0


#: The XCE states a Slurm state word can come from (the rest is decided by the end code).
_XCE = {"PENDING": ("PEND",), "RUNNING": ("RUN", "UNKWN"), "SUSPENDED": ("SSUSP", "USUSP"),
        "COMPLETING": (), "CONFIGURING": (), "COMPLETED": ("DONE",), "CANCELLED": ("EXIT",), "FAILED": ("EXIT",),
        "TIMEOUT": ("EXIT",), "OUT_OF_MEMORY": ("EXIT",), "NODE_FAIL": ("EXIT",), "PREEMPTED": ("EXIT",)}


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
