"""``xce hosts``, ``xce load``, ``xce queues``: the cluster as the controller sees it."""

from __future__ import annotations

import sys
from typing import Any

from xce.cli.client import call, connect, fail, print_json
from xce.cli.output import table
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.formats import hms, recent, size

LOAD_INDICES = ("r15s", "r1m", "r15m", "ut", "mem", "swp")


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _status(h: dict[str, Any]) -> str:
    """LSF's words: ``ok``, ``unreach``, ``closed`` (an administrator's), with the reason;
    ``closed_Excl`` while an exclusive job has it to itself."""
    if h.get("closed") is not None and h["status"] == "ok":
        return "closed" + (f" ({h['closed']})" if h["closed"] else "")
    if h.get("exclusive_job") is not None and h["status"] == "ok":
        return f"closed_Excl (job {h['exclusive_job']})"
    return str(h["status"])


def _long(h: dict[str, Any]) -> str:
    r = h["resources"]
    lines = [f"HOST {h['name']}", f"  status       {_status(h)}",
             f"  containment  {h.get('containment') or 'unknown (worker predates containment)'}",
             f"  slots        {r.get('slots', '-')} ({h['slots_used']} used by {h['njobs']} job(s))",
             f"  ncpus        {r.get('ncpus', '-')}", f"  maxmem       {size(r['maxmem']) if 'maxmem' in r else '-'}",
             f"  type         {r.get('type', '-')}", f"  model        {r.get('model', '-')}",
             f"  features     {' '.join(r.get('features') or ()) or '-'}",
             f"  last seen    {recent(h['last_seen'])}"]
    if r.get("gpu_model"):
        lines.append(f"  gpu_model    {r['gpu_model']}")
    lines += [f"  {k}  {v}" for k, v in sorted(r.items()) if "/" in k]
    return "\n".join(lines)


def hosts(names: list[str] | None, long: bool, as_json: bool, url: str | None, token: str | None,
          state_dir: str | None) -> None:
    res = call(connect(url, token, state_dir).get, "/v1/hosts")
    if names:
        known = {h["name"] for h in res["hosts"]}
        for n in names:
            if n not in known:
                fail(f"no host named {n!r}", 1)
        res = {"hosts": [h for h in res["hosts"] if h["name"] in names]}
    if as_json:
        print_json(res)
        return
    if long:
        print("\n\n".join(_long(h) for h in res["hosts"]))
        return
    rows = []
    for h in res["hosts"]:
        r = h["resources"]
        extra = ", ".join(f"{k}={v}" for k, v in sorted(r.items()) if "/" in k)
        rows.append([h["name"], _status(h), r.get("slots", "-"), h["slots_used"], h["njobs"],
                     r.get("ncpus", "-"), size(r["maxmem"]) if "maxmem" in r else "-", r.get("type", "-"),
                     extra or "-"])
    table(["HOST", "STATUS", "SLOTS", "USED", "NJOBS", "NCPUS", "MAXMEM", "TYPE", "RESOURCES"], rows)


def load(long: bool, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    res = call(connect(url, token, state_dir).get, "/v1/load")
    if as_json:
        print_json(res)
        return
    if long:  # lsload -l: every index a host reported, not only the usual six
        sys.stdout.write("\n\n".join(
            "\n".join([f"HOST {h['name']}", f"  status  {h['status']}", f"  seen    {recent(h['last_seen'])}"]
                      + [f"  {k}  {size(v) if k in ('mem', 'swp') else _num(v)}" for k, v in sorted(h["load"].items())])
            for h in res["hosts"]) + "\n")
        return
    rows = []
    for h in res["hosts"]:
        ld = h["load"]
        rows.append([h["name"], h["status"]] + [size(ld[k]) if k in ("mem", "swp") and k in ld else _num(ld.get(k))
                                                for k in LOAD_INDICES] + [recent(h["last_seen"])])
    table(["HOST", "STATUS", *LOAD_INDICES, "SEEN"], rows)


def _queue_status(q: dict) -> str:
    """bqueues' words, ``Open:Active``, ``Closed:Inact``, with why an administrator closed it."""
    text = f"{q['status'].capitalize()}:{'Active' if q['active'] else 'Inact'}"
    return text + (f" ({q['closed_reason']})" if q.get("closed_reason") else "")


def _queue_long(q: dict) -> str:
    """bqueues -l: every setting of one queue, then its jobs by state."""
    lines = [f"QUEUE: {q['name']}" + (" (the default queue)" if q.get("default") else "")]
    if q.get("description"):
        lines.append(f"  -- {q['description']}")
    for key, value in q.items():
        if key in ("name", "default", "description", "jobs", "closed_reason"):
            continue
        if key == "status" and q.get("closed_reason"):
            value = f"{value} ({q['closed_reason']})"
        elif key in ("run_limit", "max_run_limit") and value is not None:
            value = hms(value)
        if isinstance(value, dict):
            shown = ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
        else:
            shown = ", ".join(map(str, value)) if isinstance(value, list) else ("-" if value is None else value)
        lines.append(f"  {key}: {shown}")
    lines.append("  jobs: " + ", ".join(f"{s} {n}" for s, n in q["jobs"].items()))
    return "\n".join(lines)


def queues(names: list[str] | None, long: bool, as_json: bool, url: str | None, token: str | None,
           state_dir: str | None) -> None:
    res = call(connect(url, token, state_dir).get, "/v1/queues")
    if names:
        known = {q["name"] for q in res["queues"]}
        unknown = [n for n in names if n not in known]
        if unknown:
            fail(f"unknown queue {unknown[0]!r} (expected one of: {', '.join(sorted(known))})")
        res["queues"] = [q for q in res["queues"] if q["name"] in names]
    if as_json:
        print_json(res)
        return
    if long:
        sys.stdout.write("\n\n".join(_queue_long(q) for q in res["queues"]) + "\n")
        return
    rows = []
    for q in res["queues"]:
        j = q["jobs"]
        rows.append([q["name"] + (" (default)" if q["default"] else ""), q["priority"], _queue_status(q),
                     q["max_running"] or "-", q["njobs"], j["PEND"], j["RUN"], j["SSUSP"] + j["USUSP"]])
    table(["QUEUE", "PRIO", "STATUS", "MAX", "NJOBS", "PEND", "RUN", "SUSP"], rows)


COMMAND_SPECS = [
    Command("hosts", "Hosts: status, slots, static resources.",
            [Arg("names", str, many=True, required=False, help="Only these hosts."),
             Opt("long", ("-l", "--long"), bool, False, help="Details: containment, why a host is closed."),
             JSON, *common_options()], hosts,
            examples=("xce hosts", "xce hosts -l node07", "xce hosts --json"), quick_exit=True),
    Command("load", "Load indices each host last reported.",
            [Opt("long", ("-l", "--long"), bool, False, help="Every index each host reported (lsload -l)."),
             JSON, *common_options()], load,
            examples=("xce load", "xce load -l", "xce load --json"), quick_exit=True),
    Command("queues", "Queues: priority, status, job counts.",
            [Arg("names", str, many=True, required=False, help="Only these queues."),
             Opt("long", ("-l", "--long"), bool, False, help="Every setting of each queue (bqueues -l)."),
             JSON, *common_options()], queues,
            examples=("xce queues", "xce queues -l normal", "xce queues --json"), quick_exit=True),
]
