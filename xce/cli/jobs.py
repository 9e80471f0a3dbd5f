"""``xce jobs``: like bjobs; ``-l`` explains why each job waits and where it ran."""

from __future__ import annotations

import sys

from xce.cli.client import call, connect, print_json
from xce.cli.output import placement, printable, table
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.formats import hms, millisecond, recent, seconds_or_hms, size
from xce.jobref import ref_arg

TYPE_CHECKING = False
if TYPE_CHECKING:  # for annotations only: typing would cost every client command its imports (re, ...)
    from typing import Any


MEMORY = frozenset({"mem", "maxmem", "swp"})


def _command_text(argv: list[str] | None, width: int = 40) -> str:
    if argv is None:  # another user's job: private unless the cluster shows all jobs
        return "(private)"
    text = " ".join(argv)
    return text if len(text) <= width else text[: width - 3] + "..."


def _usage_lines(d: dict[str, Any]) -> list[str]:
    """What the job used: CPU time to the millisecond, memory now, at its peak and on average, then
    any other figure its workers or providers measured (latest, peak, mean)."""
    from xce.protocol import usage as names

    usage = d.get("usage") or {}
    last = usage.get("last", {})
    used = d.get("used") or {}
    out = []
    if used.get("cpu_ms") is not None:
        split = "" if used.get("cpu_user_ms") is None else \
            f" (user {used['cpu_user_ms'] / 1000:.3f} s, system {(used.get('cpu_sys_ms') or 0) / 1000:.3f} s)"
        out.append(f"  CPU time: {used['cpu_ms'] / 1000:.3f} s{split}")
    if used.get("mem_peak") is not None:
        out.append(f"  Memory: {size(used.get('mem_now'))} now, peak {size(used['mem_peak'])}, "
                   f"average {size(used.get('mem_avg'))}")
    shown = {names.MEMORY_RSS, names.MEM_PEAK, names.CPU_MS, names.CPU_USER_MS, names.CPU_SYS_MS}
    peak, mean = usage.get("peak", {}), usage.get("mean", {})
    for k in sorted(set(last) - shown):
        fmt = size if "mem" in k or k.endswith("_bytes") else (lambda v: f"{v}")
        out.append(f"  {k}: {fmt(last[k])} (peak {fmt(peak.get(k, '-'))}, mean {fmt(mean.get(k, '-'))})")
    if out:
        out.append(f"  samples: {usage.get('samples', 0)}, last at {millisecond(usage.get('ts'))}")
    return out


def _how_it_starts(d: dict[str, Any]) -> list[str]:
    """Where and how the job runs, as submitted: the options LSF's and Slurm's scripts set."""
    o = d.get("options") or {}
    out = []
    if d.get("exclusive"):
        out.append("Exclusive: no other job on its hosts")
    for key, label in (("hosts", "Hosts"), ("exclude_hosts", "Not on hosts"), ("nodes", "Hosts exactly"),
                       ("cpus_per_task", "Slots per task"), ("constraint", "Host features"),
                       ("gpu_model", "GPU model")):
        if o.get(key):
            value = o[key]
            out.append(f"{label}: {' '.join(value) if isinstance(value, list) else value}")
    if o.get("warn_signal"):
        where = "its script's shell" if o.get("warn_batch_only") else "its steps (every process if it runs none)"
        out.append(f"Warning: {o['warn_signal']} to {where} {o['warn_time']}s before the run limit")
    if o.get("open_mode") == "truncate":
        out.append("Output files: truncated at the start")
    if o.get("interactive"):
        out.append("Interactive: its terminal is its submitter's")
    if d.get("spooled"):
        out.append("Script: spooled (the job runs the copy submitted)")
    if o.get("submit_host") or o.get("submit_dir"):
        out.append(f"Submitted from: {o.get('submit_host') or '?'}:{o.get('submit_dir') or d.get('cwd') or '?'}")
    if o.get("recorded"):
        from xce.mail.asked import RECORD_KEYS

        mail = sorted((k, v) for k, v in o["recorded"].items() if k in RECORD_KEYS)
        rest = sorted((k, v) for k, v in o["recorded"].items() if k not in RECORD_KEYS)
        if mail:
            out.append("Mail: " + ", ".join(f"{k}={printable(v)}" for k, v in mail))
        if rest:
            out.append("Recorded (no effect here): " + ", ".join(f"{k}={printable(v)}" for k, v in rest))
    return out


def long_form(d: dict[str, Any]) -> str:
    lines = [
        f"Job <{shown_id(d)}>" + (f", Job Name <{d['name']}>" if d.get("name") else "")
        + f", User <{d['user']}>, Project <{d['project']}>, Queue <{d['queue']}>, "
        f"State <{d['state']}>, Priority <{d['priority']}>, Tasks <{d['tasks']}>",
        f"Command <{printable(' '.join(d['command'])) if d['command'] is not None else '(private)'}>",  # one line
    ]
    if d.get("held_by"):
        lines.append(f"Held by <{d['held_by']}>")
    if d.get("begin_time"):
        lines.append(f"Begin time <{millisecond(d['begin_time'])}>")
    if d.get("request"):
        lines.append(f"Requirement <{d['request']}>")
    if d.get("sched_request") and d["sched_request"] != d.get("request"):
        lines.append(f"Scheduled as <{d['sched_request']}>")
    for key in ("requests", "limits"):
        if d.get(key):
            lines.append(f"{key.capitalize()}: " + ", ".join(f"{k}={size(v) if k in MEMORY else v}"
                                                             for k, v in sorted(d[key].items())))
    if d.get("run_limit"):
        t = d["run_limit"]
        lines.append(f"Run limit: {hms(t)}")
    lines += _how_it_starts(d)
    lines.append(f"Submitted {millisecond(d['submit_time'])}"
                 + (f", started {millisecond(d['start_time'])}" if d.get("start_time") else "")
                 + (f", ended {millisecond(d['end_time'])}" if d.get("end_time") else ""))
    if d.get("placement"):
        lines.append("Placement: " + ", ".join(f"{p['host']} ({p['tasks']} task{'s' if p['tasks'] != 1 else ''})"
                                               for p in d["placement"]))
    if d["state"] == "PEND":
        reasons = d.get("pend_reasons") or []
        lines.append("PENDING REASONS:" if reasons else "PENDING REASONS: none reported yet by the scheduler")
        for r in reasons:
            lines.append(f"  [{r.get('step', '?')}] {r.get('text', '')}")
    if d.get("exit_code") is not None or d.get("exit_signal"):
        lines.append(f"Exit: code {d.get('exit_code')}" + (f", signal {d['exit_signal']}" if d.get("exit_signal") else ""))
    if d.get("end"):
        lines.append(f"End: {d['end']['code']}" + (f" (by {d['end']['by']})" if d["end"].get("by") else ""))
    usage = _usage_lines(d)
    if usage:
        lines.append("USAGE:")
        lines += usage
    lines.append("HISTORY:")
    for h in d.get("history", []):
        move = f"{h['from'] or '-'} -> {h['to']}" if h["from"] != h["to"] else h["to"]
        lines.append(f"  {millisecond(h['ts'])}  {move:<14}  {h['reason']} (by {h['by']})")
    return "\n".join(lines)


def shown_id(r: dict[str, Any]) -> str:
    """``12``, or ``12[3]`` for element 3 of array 12."""
    return str(r["jobid"]) if r.get("array_index") is None else f"{r['array_id']}[{r['array_index']}]"


#: ``-o`` columns: header and how each is shown (LSF's bjobs -o names where they exist).
COLUMNS = {
    "jobid": ("JOBID", None), "name": ("JOB_NAME", None), "user": ("USER", None),
    "stat": ("STAT", None), "queue": ("QUEUE", None), "project": ("PROJECT", None), "tasks": ("TASKS", None),
    "priority": ("PRIORITY", None), "exec_host": ("EXEC_HOST", None), "submit_time": ("SUBMIT_TIME", None),
    "start_time": ("START_TIME", None), "finish_time": ("FINISH_TIME", None), "exit_code": ("EXIT_CODE", None),
    "command": ("COMMAND", None), "pend_reason": ("PEND_REASON", None), "reason": ("REASON", None),
    "end": ("END", None),
}
#: -p, -r, -d: LSF's bjobs views, as state filters.
VIEWS = {"pend": "PEND", "run": "RUN,SSUSP,USUSP", "done": "DONE,EXIT"}
#: ``-d`` shows jobs that ended this recently (LSF's CLEAN_PERIOD default); older ones: ``-a``, ``xce acct``.
RECENT_S = 3600


def _cell(r: dict[str, Any], col: str) -> Any:
    if col == "jobid":
        return shown_id(r)
    if col == "stat":
        return r["state"]
    if col == "exec_host":
        return placement(r["placement"])
    if col in ("submit_time", "start_time"):
        return recent(r[col])
    if col == "finish_time":
        return recent(r["end_time"])
    if col == "end":  # how it ended, in one word (xce.endcodes): MEMLIMIT, RUNLIMIT ...
        return (r.get("end") or {}).get("code") or "-"
    if col == "command":
        return _command_text(r["command"])
    if col == "pend_reason":
        reasons = r.get("pend_reasons") or []
        return reasons[0]["text"] if reasons else "-"
    value = r.get(col)
    return "-" if value is None else value


def _columns(text: str) -> list[str]:
    cols = [c.lower() for c in text.replace(",", " ").split()]
    bad = [c for c in cols if c not in COLUMNS]
    if bad or not cols:
        raise ValueError(f"unknown column {bad[0]!r} (expected some of: {', '.join(COLUMNS)})" if bad
                         else "expected column names")
    return cols


def jobs(jobids: list[str] | None, all_: bool, user: str | None, queue: str | None, state: str | None, long: bool,
         name: str | None, view: str | None, columns: list[str] | None, as_json: bool, url: str | None,
         token: str | None, state_dir: str | None) -> None:
    client = connect(url, token, state_dir)
    if view is not None:
        state = VIEWS[view]
    listing = call(client.get, "/v1/jobs", user=user, queue=queue, state=state, all="true" if all_ else None,
                   job=jobids or None, name=name, ended_within=RECENT_S if view == "done" else None)
    rows = listing["jobs"]
    missing = listing.get("errors") or []
    for problem in missing:
        print(f"xce: {problem}", file=sys.stderr)
    if long:
        details = [call(client.get, f"/v1/jobs/{r['jobid']}") for r in rows]
        if as_json:
            print_json({"jobs": details})
        else:
            sys.stdout.write(printable("\n\n".join(long_form(d) for d in details), "\n\t")
                             + ("\n" if details else ""))
    elif as_json:
        print_json(listing)
    elif not rows:
        if not missing:
            print("No job ended in the last hour" if view == "done" else
                  "No job found" if all_ else "No unfinished job found")
    elif columns:
        table([COLUMNS[c][0] for c in columns], [[_cell(r, c) for c in columns] for r in rows])
    else:
        table(["JOBID", "USER", "STAT", "QUEUE", "TASKS", "EXEC_HOST", "SUBMIT_TIME", "COMMAND"],
              [[shown_id(r), r["user"],
                r["state"], r["queue"], r["tasks"], placement(r["placement"]), recent(r["submit_time"]),
                _command_text(r["command"])] for r in rows])
        if view == "pend":  # bjobs -p: why each one waits
            for r in rows:
                reasons = r.get("pend_reasons") or []
                print(printable(f"{shown_id(r)}: " + ("; ".join(f"[{x.get('step', '?')}] {x.get('text', '')}"
                                                                for x in reasons)
                                                      or "no reason reported yet by the scheduler")))
    if listing.get("truncated"):
        print(f"xce: only the first {len(rows)} jobs are shown; narrow the query with -u, -q or -s", file=sys.stderr)
    if missing:
        raise SystemExit(1)


JOBS = Command(
    "jobs", "List jobs (your unfinished ones by default).",
    [
        Arg("jobids", ref_arg, many=True, required=False, metavar="JOB", complete="jobs",
            help="Only these jobs: ids, ID[INDEX], ID[1-5] (array elements), names."),
        Opt("all_", ("-a", "--all"), bool, False, help="Include finished jobs (DONE, EXIT)."),
        Opt("user", ("-u", "--user"), help="A user, or 'all' (default: you).", complete="users"),
        Opt("queue", ("-q", "--queue"), help="Only this queue.", complete="queues"),
        Opt("state", ("-s", "--state"), help="Only these states, e.g. PEND,RUN."),
        Opt("long", ("-l", "--long"), bool, False, help="Details: pend reasons, history, placement, usage."),
        Opt("name", ("-J", "--job-name"), help="Only jobs of this name; '*' matches any run of characters.",
            metavar="NAME"),
        Opt("view", ("-p", "--pending"), const="pend", help="Pending jobs, each with why it waits (bjobs -p)."),
        Opt("view", ("-r", "--running"), const="run", help="Running and suspended jobs (bjobs -r)."),
        Opt("view", ("-d", "--done"), const="done", help="Jobs that finished (DONE, EXIT) in the last hour (bjobs -d); older: -a or xce acct."),
        Opt("columns", ("-o", "--output"), _columns, metavar="COLUMNS",
            help="These columns, e.g. 'jobid name stat pend_reason': " + ", ".join(COLUMNS) + "."),
        JSON,
        *common_options(),
    ],
    jobs,
    quick_exit=True,
    examples=("xce jobs", "xce jobs -a -u all -q normal", "xce jobs -l 12", "xce jobs -s PEND --json", "xce jobs -p",
              "xce jobs -o 'jobid name stat exec_host pend_reason' sweep"),
)


def history_text(d: dict[str, Any], now_ns: int) -> str:
    """LSF's bhist -l: every state change with its time, then the time spent in each state."""
    lines = [f"Job <{shown_id(d)}>" + (f", Job Name <{d['name']}>" if d.get("name") else "")
             + f", User <{d['user']}>, Queue <{d['queue']}>, State <{d['state']}>"]
    spent: dict[str, int] = {}
    hist = d.get("history", [])
    for i, h in enumerate(hist):
        move = f"{h['from'] or '-'} -> {h['to']}" if h["from"] != h["to"] else h["to"]
        lines.append(f"  {millisecond(h['ts'])}  {move:<14}  {h['reason']} (by {h['by']})")
        end = hist[i + 1]["ts"] if i + 1 < len(hist) else (None if h["to"] in ("DONE", "EXIT") else now_ns)
        if end is not None:
            spent[h["to"]] = spent.get(h["to"], 0) + max(0, end - h["ts"])
    if spent:
        each = ", ".join(f"{s} {seconds_or_hms(ns / 1e9)}" for s, ns in spent.items())
        lines.append(f"  Time in each state: {each}; total {seconds_or_hms(sum(spent.values()) / 1e9)}")
    return "\n".join(lines)


def hist(jobids: list[str], as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    import time

    client = connect(url, token, state_dir)
    listing = call(client.get, "/v1/jobs", job=jobids, all="true")
    for problem in listing.get("errors") or []:
        print(f"xce: {problem}", file=sys.stderr)
    details = [call(client.get, f"/v1/jobs/{r['jobid']}") for r in listing["jobs"]]
    if as_json:
        print_json({"jobs": [{"jobid": d["jobid"], "job": shown_id(d), "history": d["history"]} for d in details]})
    elif details:
        now = time.time_ns()
        sys.stdout.write(printable("\n\n".join(history_text(d, now) for d in details), "\n\t") + "\n")
    if listing.get("errors"):
        raise SystemExit(1)


HIST = Command(
    "hist", "Every state change of jobs with its time, and the time spent in each state (LSF bhist -l).",
    [Arg("jobids", ref_arg, many=True, metavar="JOB", help="Jobs: ids, ID[INDEX], ID[1-5], names.", complete="jobs"),
     JSON, *common_options()],
    hist, quick_exit=True, examples=("xce hist 12", "xce hist sweep[3] --json"),
)

COMMAND_SPECS = [JOBS, HIST]
