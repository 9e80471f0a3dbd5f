"""``xce jobs``: like bjobs; ``-l`` explains why each job waits and where it ran."""

from __future__ import annotations

import sys


from xce.cli.client import call, connect, print_json
from xce.cli.output import placement, size, stamp, table, when
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.jobref import ref_arg


MEMORY = frozenset({"mem", "maxmem", "swp"})


def _command_text(argv: list[str] | None, width: int = 40) -> str:
    if argv is None:  # another user's job: private unless the cluster shows all jobs
        return "(private)"
    text = " ".join(argv)
    return text if len(text) <= width else text[: width - 3] + "..."


def _usage_lines(usage: dict[str, Any]) -> list[str]:
    last = usage.get("last", {})
    if not last:
        return []
    peak, mean = usage.get("peak", {}), usage.get("mean", {})
    out = []
    for k in sorted(last):
        fmt = size if "mem" in k or k.endswith("_bytes") else (lambda v: f"{v}")
        out.append(f"  {k}: {fmt(last[k])} (peak {fmt(peak.get(k, '-'))}, mean {fmt(mean.get(k, '-'))})")
    out.append(f"  samples: {usage.get('samples', 0)}, last at {stamp(usage.get('ts'))}")
    return out


def long_form(d: dict[str, Any]) -> str:
    lines = [
        f"Job <{shown_id(d)}>" + (f", Job Name <{d['name']}>" if d.get("name") else "")
        + f", User <{d['user']}>, Project <{d['project']}>, Queue <{d['queue']}>, "
        f"State <{d['state']}>, Priority <{d['priority']}>, Tasks <{d['tasks']}>",
        f"Command <{' '.join(d['command']) if d['command'] is not None else '(private)'}>",
    ]
    if d.get("held_by"):
        lines.append(f"Held by <{d['held_by']}>")
    if d.get("begin_time"):
        lines.append(f"Begin time <{stamp(d['begin_time'])}>")
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
        lines.append(f"Run limit: {t // 3600}:{t // 60 % 60:02d}:{t % 60:02d}")
    lines.append(f"Submitted {stamp(d['submit_time'])}"
                 + (f", started {stamp(d['start_time'])}" if d.get("start_time") else "")
                 + (f", ended {stamp(d['end_time'])}" if d.get("end_time") else ""))
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
    usage = _usage_lines(d.get("usage") or {})
    if usage:
        lines.append("USAGE:")
        lines += usage
    lines.append("HISTORY:")
    for h in d.get("history", []):
        move = f"{h['from'] or '-'} -> {h['to']}" if h["from"] != h["to"] else h["to"]
        lines.append(f"  {stamp(h['ts'])}  {move:<14}  {h['reason']} (by {h['by']})")
    return "\n".join(lines)


def shown_id(r: dict[str, Any]) -> str:
    """``12``, or ``12[3]`` for element 3 of array 12."""
    return str(r["jobid"]) if r.get("array_index") is None else f"{r['array_id']}[{r['array_index']}]"


def jobs(jobids: list[str] | None, all_: bool, user: str | None, queue: str | None, state: str | None, long: bool,
         name: str | None, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    client = connect(url, token, state_dir)
    listing = call(client.get, "/v1/jobs", user=user, queue=queue, state=state, all="true" if all_ else None,
                   job=jobids or None, name=name)
    rows = listing["jobs"]
    missing = listing.get("errors") or []
    for problem in missing:
        print(f"xce: {problem}", file=sys.stderr)
    if long:
        details = [call(client.get, f"/v1/jobs/{r['jobid']}") for r in rows]
        if as_json:
            print_json({"jobs": details})
        else:
            sys.stdout.write("\n\n".join(long_form(d) for d in details) + ("\n" if details else ""))
    elif as_json:
        print_json(listing)
    elif not rows:
        if not missing:
            print("No unfinished job found" if not all_ else "No job found")
    else:
        table(["JOBID", "USER", "STAT", "QUEUE", "TASKS", "EXEC_HOST", "SUBMIT_TIME", "COMMAND"],
              [[shown_id(r), r["user"],
                r["state"], r["queue"], r["tasks"], placement(r["placement"]), when(r["submit_time"]),
                _command_text(r["command"])] for r in rows])
    if listing.get("truncated"):
        print(f"xce: only the first {len(rows)} jobs are shown; narrow the query with -u, -q or -s", file=sys.stderr)
    if missing:
        raise SystemExit(1)


JOBS = Command(
    "jobs", "List jobs (your unfinished ones by default).",
    [
        Arg("jobids", ref_arg, many=True, required=False, metavar="JOB",
            help="Only these jobs: ids, ID[INDEX], ID[1-5] (array elements), names."),
        Opt("all_", ("-a", "--all"), bool, False, help="Include finished jobs (DONE, EXIT)."),
        Opt("user", ("-u", "--user"), help="A user, or 'all' (default: you)."),
        Opt("queue", ("-q", "--queue"), help="Only this queue."),
        Opt("state", ("-s", "--state"), help="Only these states, e.g. PEND,RUN."),
        Opt("long", ("-l", "--long"), bool, False, help="Details: pend reasons, history, placement, usage."),
        Opt("name", ("-J", "--job-name"), help="Only jobs of this name.", metavar="NAME"),
        JSON,
        *common_options(),
    ],
    jobs,
    quick_exit=True,
    examples=("xce jobs", "xce jobs -a -u all -q normal", "xce jobs -l 12", "xce jobs -s PEND --json"),
)

COMMAND_SPECS = [JOBS]
