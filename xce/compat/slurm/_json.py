"""``squeue --json`` and ``sacct --json``: the layout of Slurm 23.02's ``data_parser/v0.0.39``.

One version's layout, stated in ``meta``, so that a tool written against it reads what it expects:
``jobs[]`` with ``job_id``, ``name``, ``job_state``, ``user_name``, ``partition``, ``nodes``,
``exit_code`` ... (squeue), ``job_id``, ``name``, ``state.current``, ``user``, ``partition``,
``nodes``, ``exit_code.status``/``return_code``, ``time.*`` ... (sacct). Numbers Slurm may leave
unset are its ``{"set", "infinite", "number"}`` objects; times are seconds since the epoch, limits
minutes. Filters apply as for the table; formatting options are ignored, as Slurm ignores them."""

from __future__ import annotations

import json
import sys

from xce.compat.slurm import _format as fmt, _states as states

VERSION = {"major": 23, "micro": 0, "minor": 2}
PARSER = "v0.0.39"


def _n(value: int | float | None, infinite: bool = False) -> dict:
    """Slurm's optional number (``uint32_no_val``)."""
    if infinite:
        return {"set": False, "infinite": True, "number": 0}
    if value is None:
        return {"set": False, "infinite": False, "number": 0}
    return {"set": True, "infinite": False, "number": int(value)}


def _seconds(ns: int | None) -> int:
    return 0 if ns is None else int(ns // 10**9)


def _limit(job: dict) -> dict:
    lim = job.get("run_limit")
    return _n(None, infinite=True) if not lim else _n(-(-int(lim) // 60))


def _array(job: dict) -> tuple[int, int | None]:
    return (int(job["array_id"]), job.get("array_index")) if job.get("array_id") is not None else (0, None)


def _status(job: dict) -> tuple[str, int, int]:
    """(sacct's exit status word, return code, signal number)."""
    sig = states.signal_number(job.get("exit_signal"))
    code = job.get("exit_code")
    code = 0 if code is None or code < 0 or (sig and code >= 128) else int(code)
    if job["state"] not in ("DONE", "EXIT"):
        return "PENDING", 0, 0
    if sig:
        return "SIGNALED", code, sig
    return ("SUCCESS" if code == 0 and job["state"] == "DONE" else "FAILED"), code, 0


def squeue_job(job: dict, now: float) -> dict:
    array_id, index = _array(job)
    _, code, sig = _status(job)
    placed = fmt.nodes(job)
    return {
        "account": job.get("project") or "", "array_job_id": _n(array_id), "array_task_id": _n(index),
        "array_max_tasks": _n(job.get("array_limit") or 0), "array_task_string": "",
        "command": " ".join(job.get("command") or []), "cpus": _n(job["tasks"]),
        "cpus_per_task": _n(job.get("cpus_per_task") or 1), "current_working_directory": job.get("cwd") or "",
        "end_time": _n(_seconds(job.get("end_time"))), "exit_code": _n(code << 8 | sig),
        "job_id": int(job["jobid"]), "job_state": states.word(job), "name": fmt.job_name(job),
        "node_count": _n(len(placed) or 1), "nodes": ",".join(placed), "partition": job["queue"],
        "priority": _n(job.get("priority") or 0), "qos": "normal", "state_reason": states.reason(job),
        "standard_output": job.get("stdout") or "", "standard_error": job.get("stderr") or "",
        "start_time": _n(_seconds(job.get("start_time"))), "submit_time": _n(_seconds(job.get("submit_time"))),
        "time_limit": _limit(job), "user_id": fmt.uid(job["user"]), "user_name": job["user"],
    }


def sacct_job(job: dict, now: float) -> dict:
    array_id, index = _array(job)
    word, code, sig = _status(job)
    start, end = job.get("start_time"), job.get("end_time")
    exit_code: dict = {"status": word, "return_code": code}
    if sig:
        exit_code["signal"] = {"signal_id": sig, "name": str(job.get("exit_signal") or "").removeprefix("SIG")}
    return {
        "account": job.get("project") or "", "allocation_nodes": len(fmt.nodes(job)),
        "array": {"job_id": array_id, "limits": {"max": {"running": {"tasks": job.get("array_limit") or 0}}},
                  "task": "" if index is None else str(index), "task_id": _n(index)},
        "cluster": "xce", "exit_code": exit_code, "job_id": int(job["jobid"]), "name": fmt.job_name(job),
        "nodes": ",".join(fmt.nodes(job)) or "None assigned", "partition": job["queue"],
        "priority": _n(job.get("priority") or 0), "qos": "normal",
        "state": {"current": states.word(job), "reason": states.wait_reason(job)}, "steps": [],
        "time": {"elapsed": int(fmt.used(job, now)), "eligible": _seconds(job.get("submit_time")),
                 "end": _seconds(end), "limit": _limit(job), "start": _seconds(start),
                 "submission": _seconds(job.get("submit_time"))},
        "user": job["user"], "working_directory": job.get("cwd") or "",
    }


def write(prog: str, jobs: list[dict], row, now: float) -> int:
    """The document, as Slurm's ``--json`` prints it."""
    doc = {
        "meta": {"plugin": {"type": f"openapi/{PARSER}", "name": f"Slurm OpenAPI {PARSER}",
                            "data_parser": f"data_parser/{PARSER}"},
                 "command": [prog], "Slurm": {"version": VERSION, "release": "23.02.0"}},
        "jobs": [row(j, now) for j in jobs], "warnings": [], "errors": [],
    }
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return 0
