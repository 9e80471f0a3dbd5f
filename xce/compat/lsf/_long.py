"""The long forms: ``bjobs -l``, ``bhist -l``, ``bacct -l``, each a block per job as LSF writes it.

Lines are not wrapped at 80 columns (LSF's ``-UF``): clients search them for ``Job <N>``,
``Status <STAT>``, ``Started on <host>``, ``Done successfully``, ``Exited with exit code N.``,
``Completed <exit>`` and ``PENDING REASONS:``, which a wrap could cut in two.
"""

from __future__ import annotations

from xce.compat.lsf import _jobs, _states
from xce.compat.lsf._client import request
from xce.formats import lsf_long

SEPARATOR = "-" * 78
STATES = ("PEND", "PSUSP", "RUN", "USUSP", "SSUSP", "UNKWN")


def details(client, jobs: list[dict]) -> list[dict]:
    return [request(client, "GET", f"/v1/jobs/{j['jobid']}") for j in jobs]


def _cpu(d: dict) -> float:
    """Seconds of CPU the job used (user + system, measured to the millisecond)."""
    return ((d.get("used") or {}).get("cpu_ms") or 0) / 1000


def _mem_mb(d: dict, key: str) -> int:
    return int(((d.get("used") or {}).get(key) or 0) // (1024 * 1024))


def memory(n_bytes: int | None) -> str:
    """A memory figure as LSF's long forms write one: ``120 Mbytes``, ``11.6 Gbytes`` from a gigabyte."""
    mb = (n_bytes or 0) / (1024 * 1024)
    return f"{mb / 1024:.1f} Gbytes" if mb >= 1024 else f"{int(mb)} Mbytes"


def _memory_usage(d: dict) -> list[str]:
    """``MEMORY USAGE:`` with the job's peak and average, once it has been measured."""
    used = d.get("used") or {}
    if not d.get("start_time") or used.get("mem_peak") is None:
        return []
    return ["", " MEMORY USAGE:", f" MAX MEM: {memory(used['mem_peak'])};  AVG MEM: {memory(used.get('mem_avg'))}"]


def _collected(d: dict) -> list[str]:
    """A running job's latest figures, as LSF reports the resource usage it collected (whole CPU
    seconds there, as LSF writes them while a job runs)."""
    used, usage = d.get("used") or {}, d.get("usage") or {}
    if d["state"] not in ("RUN", "USUSP", "SSUSP") or used.get("cpu_ms") is None:
        return []
    at = lsf_long(usage.get("ts"))
    pad = " " * (len(at) + 2)
    return [f"{at}: Resource usage collected.", f"{pad}The CPU time used is {round(used['cpu_ms'] / 1000)} seconds.",
            f"{pad}MEM: {memory(used.get('mem_now'))};  SWAP: 0 Mbytes"]


def _head(d: dict, with_status: bool = True) -> str:
    parts = [f"Job <{_jobs.long_id(d)}>"]
    if d.get("name"):
        parts.append(f"Job Name <{_jobs.job_name(d)}>")
    parts += [f"User <{d['user']}>", f"Project <{d['project']}>"]
    if with_status:
        parts += [f"Status <{_states.stat(d)}>", f"Queue <{d['queue']}>"]
    parts.append(f"Command <{_jobs.command_text(d)}>")
    return ", ".join(parts)


def _submitted(d: dict, queue: bool = False) -> str:
    options = d.get("options") or {}
    text = f"{lsf_long(d['submit_time'])}: Submitted from host <{d.get('submit_host') or options.get('submit_host') or '-'}>"
    if queue:
        text += f", to Queue <{d['queue']}>"
    text += f", CWD <{options.get('submit_dir') or d.get('cwd') or ''}>"
    if d.get("stdout"):
        text += f", Output File <{d['stdout']}>"
    if d.get("stderr"):
        text += f", Error File <{d['stderr']}>"
    if d["tasks"] > 1:
        text += f", {d['tasks']} Task(s)"
    return text + ";"


def _started(d: dict) -> str:
    hosts = _jobs.hosts(d)
    where = f"<{hosts[0]}>" if d["tasks"] == 1 and len(hosts) == 1 else \
        f"{d['tasks']} Hosts/Processors " + " ".join(f"<{h}>" for h in hosts)
    return f"{lsf_long(d['start_time'])}: Started on {where}, Execution CWD <{d.get('cwd') or ''}>;"


def _ended(d: dict, end: str = ".") -> list[str]:
    """``Done successfully.``/``Exited with exit code N.``, then ``Completed <done|exit>``."""
    at = lsf_long(d.get("end_time"))
    cpu = f" The CPU time used is {_cpu(d):.1f} seconds{end}"
    if d["state"] == "DONE":
        return [f"{at}: Done successfully.{cpu}", f"{at}: Completed <done>."]
    code = _states.exit_code(d)
    first = f"{at}: Exited with exit code {code}.{cpu}" if code else f"{at}: Exited.{cpu}"
    reason = _states.exit_reason(d)
    return [first, f"{at}: Completed <exit>" + (f"; {reason}." if reason else ".")]


def _pending(d: dict) -> list[str]:
    reasons = [r.get("text", "") for r in d.get("pend_reasons") or []]
    if d.get("held_by"):
        reasons.insert(0, f"The job was suspended by the user while pending (held by {d['held_by']})")
    return [" PENDING REASONS:", *(f" {r};" for r in reasons or ["New job is waiting for scheduling"])]


def bjobs_block(d: dict) -> list[str]:
    lines = ["", _head(d), _submitted(d)]
    if d.get("run_limit"):
        lines += ["", " RUNLIMIT", f" {d['run_limit'] / 60:.1f} min", ""]
    if d.get("start_time"):
        lines.append(_started(d))
    if d["state"] in ("USUSP", "SSUSP"):
        lines += [" SUSPENDING REASONS:", f" {d.get('reason') or 'The job was suspended by user'};"]
    if d["state"] in ("DONE", "EXIT"):
        lines += _ended(d)
    if d["state"] == "PEND":
        lines += ([""] if lines[-1] else []) + _pending(d)
    lines += _collected(d)
    return lines + _memory_usage(d)


def bjobs_long(client, jobs: list[dict]) -> str:
    blocks = ["\n".join(bjobs_block(d)) for d in details(client, jobs)]
    return ("\n" + SEPARATOR + "\n").join(blocks) + "\n"


def spent(d: dict, now_ns: int) -> dict[str, int]:
    """Seconds in each of LSF's states, from the job's history (a hold counts as PSUSP)."""
    out = dict.fromkeys(STATES, 0)
    hist = d.get("history") or []
    state, since = None, None
    for h in hist:
        if state is not None and state in out:
            out[state] += max(0, (h["ts"] - since) // 10**9)
        state, since = h["to"], h["ts"]
        if state == "PEND" and (h.get("reason") or "").startswith("held"):
            state = "PSUSP"
    if state in out:
        out[state] += max(0, (now_ns - since) // 10**9)
    return out


def _event(d: dict, h: dict) -> list[str]:
    at = lsf_long(h["ts"])
    frm, to, reason, by = h.get("from"), h["to"], h.get("reason") or "", h.get("by") or ""
    if frm is None:
        return [_submitted(d, queue=True).replace(lsf_long(d["submit_time"]), at, 1)]
    if to == "RUN" and frm == "PEND":
        hosts = " ".join(f"<{x}>" for x in _jobs.hosts(d)) or "<->"
        return [f"{at}: Dispatched {d['tasks']} Task(s) on Host(s) {hosts}, Allocated {d['tasks']} Slot(s) on "
                f"Host(s) {hosts};"]
    if to in ("USUSP", "SSUSP"):
        return [f"{at}: Suspended by the user or administrator <{by}>;" if to == "USUSP" else
                f"{at}: Suspended: {reason};"]
    if to == "RUN":
        return [f"{at}: Resumed by the user or administrator <{by}>;" if frm == "USUSP" else f"{at}: Resumed;"]
    if to == "PEND" and frm == "PEND":
        return [f"{at}: Suspended by the user or administrator <{by}>;" if reason.startswith("held") else
                f"{at}: Resumed by the user or administrator <{by}>;" if reason.startswith("released") else
                f"{at}: {reason};"]
    if to == "PEND":
        return [f"{at}: Job has been requeued;"]
    if to in ("DONE", "EXIT"):
        if d["state"] in ("DONE", "EXIT") and h is (d.get("history") or [None])[-1]:
            return [line.replace(lsf_long(d.get("end_time")), at, 1) for line in _ended(d, ";")]
        return [f"{at}: {'Done successfully' if to == 'DONE' else 'Exited'}; {reason};"]
    return [f"{at}: {reason};"]


def bhist_block(d: dict, now_ns: int) -> list[str]:
    lines = ["", _head(d, with_status=False)]
    for h in d.get("history") or []:
        lines += _event(d, h)
    lines += _memory_usage(d)
    times = spent(d, now_ns)
    total = sum(times.values())
    last = d.get("end_time") if d["state"] in ("DONE", "EXIT") and d.get("end_time") else now_ns
    lines += ["", f"Summary of time in seconds spent in various states by  {lsf_long(last)}",
              "  " + "".join(f"{s:<9}" for s in (*STATES, "TOTAL")).rstrip(),
              "  " + "".join(f"{v:<9}" for v in (*times.values(), total)).rstrip()]
    return lines


def bacct_block(d: dict) -> list[str]:
    lines = ["", _head(d), _submitted(d)]
    if d.get("start_time"):
        hosts = " ".join(f"<{x}>" for x in _jobs.hosts(d))
        lines.append(f"{lsf_long(d['start_time'])}: Dispatched {d['tasks']} Task(s) on Host(s) {hosts}, "
                     f"Allocated {d['tasks']} Slot(s) on Host(s) {hosts};")
    at = lsf_long(d.get("end_time"))
    reason = _states.exit_reason(d)
    lines.append(f"{at}: Completed <{'done' if d['state'] == 'DONE' else 'exit'}>"
                 + (f"; {reason}." if reason else "."))
    wait = max(0, ((d.get("start_time") or d.get("end_time") or d["submit_time"]) - d["submit_time"]) // 10**9)
    turnaround = max(0, ((d.get("end_time") or d["submit_time"]) - d["submit_time"]) // 10**9)
    cpu = _cpu(d)
    hog = cpu / turnaround if turnaround else 0.0
    mem = _mem_mb(d, "peak")
    lines += ["", "Accounting information about this job:",
              "     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP",
              f"{cpu:10.2f}{wait:9d}{turnaround:15d}{('done' if d['state'] == 'DONE' else 'exit'):>9}"
              f"{hog:15.4f}{str(mem) + 'M':>7}{'0M':>8}"]
    return lines
