"""Which state move mails what, and the mail itself: Slurm's and LSF's subject lines, a body to act on.

Pure (no I/O): the controller calls :func:`of_move` inside the transaction that moves the job,
with the job's row as it is after the move, and hands what it returns to :mod:`.sender` once the
transaction commits.

When each family mails (a move is the job state table's, :mod:`xce.controller.jobs.states`):

======================  ==========================================  =================================
move                    Slurm (``--mail-type``)                     LSF
======================  ==========================================  =================================
dispatch (PEND -> RUN)  BEGIN: ``Began, Queued time ...``           ``-B``: ``Started``
a run limit's end       TIME_LIMIT: ``Reached time limit``          -
any end (DONE, EXIT)    COMPLETED or CANCELLED: END: ``Ended``;     ``-N``: ``Done`` or ``Exited``;
                        otherwise FAIL: ``Failed``, else END        ``-Ne``: ``Exited`` only
rerun, reschedule       REQUEUE: ``Requeued``                       -
======================  ==========================================  =================================

As slurmctld's ``job_completion_logger`` does, a failed job asking for both END and FAIL gets the one
``Failed`` mail. An array element is mailed alone with ARRAY_TASKS; otherwise the array gets one
``Began`` (when its first element starts) and one summary (when its last ends), which the caller
decides with the store (``first``/``last`` of :func:`of_move`). TIME_LIMIT_50/80/90, INVALID_DEPEND
and STAGE_OUT are accepted and never mailed here: nothing here warns before a limit, a dependency
that can never be met leaves the job pending, and there is no stage-out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from xce import formats, jobfiles
from xce.mail.asked import LSF, Asked

__all__ = ["Mail", "occasions", "of_move", "slurm_subject", "lsf_subject", "recipient"]

#: slurmctld's words for each mail type (``_mail_type_str`` in its agent.c).
_SLURM_WORDS = {"BEGIN": "Began", "END": "Ended", "FAIL": "Failed", "REQUEUE": "Requeued",
                "TIME_LIMIT": "Reached time limit"}
#: XCE's end codes (:mod:`xce.endcodes`) as Slurm's job state words.
_SLURM_ENDS = {"DONE": "COMPLETED", "KILLED": "CANCELLED", "RUNLIMIT": "TIMEOUT", "MEMLIMIT": "OUT_OF_MEMORY",
               "NODE_FAIL": "NODE_FAIL", "PREEMPTED": "PREEMPTED", "NOT_STARTED": "FAILED", "EXIT": "FAILED"}
_ENDED = ("DONE", "EXIT")


@dataclass(frozen=True, slots=True)
class Mail:
    """One message, ready to send: who to, its subject and plain-text body, and the job (for the log)."""

    jobid: int
    to: str
    subject: str
    body: str


def recipient(asked: Asked, user: str, domain: str | None) -> str:
    """The address asked, else the submitting user at the site's mail domain (Slurm's ``MailDomain``),
    else the bare user name, which the relay or the local sendmail delivers locally."""
    if asked.to:
        return asked.to
    return f"{user}@{domain}" if domain else user


def slurm_state(job: dict[str, Any]) -> str:
    """The Slurm state word of a job that has ended (``COMPLETED``, ``FAILED``, ``TIMEOUT`` ...)."""
    if job["state"] == "DONE":
        return "COMPLETED"
    return _SLURM_ENDS.get(job.get("end_code") or "EXIT", "FAILED")


def occasions(asked: Asked, verb: str, new: str, job: dict[str, Any]) -> list[str]:
    """The mail types this move raises for this request, in sending order (the table above)."""
    types = asked.types
    if verb == "dispatch":
        return ["BEGIN"] if "BEGIN" in types else []
    if new in _ENDED:
        if asked.family == LSF:
            return ["END"] if "END" in types or ("FAIL" in types and new == "EXIT") else []
        out = ["TIME_LIMIT"] if "TIME_LIMIT" in types and job.get("end_code") == "RUNLIMIT" else []
        if slurm_state(job) in ("COMPLETED", "CANCELLED"):
            return out + (["END"] if "END" in types else [])
        return out + (["FAIL"] if "FAIL" in types else ["END"] if "END" in types else [])
    if verb in ("rerun", "reschedule") and asked.family != LSF:
        return ["REQUEUE"] if "REQUEUE" in types else []
    return []


def of_move(job: dict[str, Any], verb: str, new: str, asked: Asked, *, cluster: str, domain: str | None,
            first: bool = True, last: bool = True, summary: dict[str, Any] | None = None) -> list[Mail]:
    """The mail ``verb`` taking ``job`` to ``new`` raises. For an array element mailed as part of its
    whole array (Slurm without ARRAY_TASKS), ``first``: no other element has started (a BEGIN is the
    array's), ``last``: none is left unfinished (an end is the array's), ``summary``: the array's
    states and exit codes (``{"states": [...], "exit_codes": [...]}``) for the summary's subject."""
    whole_array = job.get("array_id") is not None and asked.family != LSF and "ARRAY_TASKS" not in asked.types
    out = []
    for kind in occasions(asked, verb, new, job):
        if whole_array and not (first if kind == "BEGIN" else last):
            continue
        if asked.family == LSF:
            subject = lsf_subject(job, kind, cluster)
        else:
            subject = slurm_subject(job, kind, (summary or {}) if whole_array else None)
        out.append(Mail(job["id"], recipient(asked, job["user"], domain), subject, body(job, asked.family, cluster)))
    return out


def _name(job: dict[str, Any]) -> str:
    return jobfiles.job_name(job.get("name"), _command(job))


def _command(job: dict[str, Any]) -> list[str]:
    cmd = job.get("command")
    if isinstance(cmd, str):
        try:
            cmd = json.loads(cmd)
        except ValueError:
            return [cmd]
    return list(cmd or [])


def _seconds(since_ns: int | None, until_ns: int | None) -> float:
    return max(0.0, (until_ns - since_ns) / 1e9) if since_ns and until_ns else 0.0


def slurm_subject(job: dict[str, Any], kind: str, summary: dict[str, Any] | None = None) -> str:
    """slurmctld's subject (``mail_job_info``): ``Slurm Job_id=12 Name=x Ended, Run time 00:00:05,
    COMPLETED, ExitCode 0``; an element alone ``Slurm Array Task Job_id=10_2 (12) ...``; a whole
    array's ``Slurm Array Summary Job_id=10_* (10) Name=x Ended, COMPLETED, ExitCode [0-0]``."""
    word = _SLURM_WORDS[kind]
    ends = kind in ("END", "FAIL")
    if summary is not None:
        states = set(summary.get("states") or [slurm_state(job)])
        codes = summary.get("exit_codes") or [job.get("exit_code") or 0]
        term = f", {states.pop() if len(states) == 1 else 'Mixed'}, ExitCode [{min(codes)}-{max(codes)}]" \
            if ends else ""
        return f"Slurm Array Summary Job_id={job['array_id']}_* ({job['array_id']}) Name={_name(job)} {word}{term}"
    if kind == "BEGIN":
        when = f", Queued time {formats.slurm_elapsed(_seconds(job.get('submit_time'), job.get('start_time')))}"
    else:
        when = f", Run time {formats.slurm_elapsed(_seconds(job.get('start_time'), job.get('end_time')))}"
    term = f", {slurm_state(job)}, ExitCode {job.get('exit_code') or 0}" if ends else ""
    if job.get("array_id") is not None:
        head = f"Slurm Array Task Job_id={job['array_id']}_{job['array_index']} ({job['id']})"
    else:
        head = f"Slurm Job_id={job['id']}"
    return f"{head} Name={_name(job)} {word}{when}{term}"


def lsf_jobid(job: dict[str, Any]) -> str:
    """``12`` or, for an array element, LSF's ``10[2]``."""
    return f"{job['array_id']}[{job['array_index']}]" if job.get("array_id") is not None else str(job["id"])


def lsf_subject(job: dict[str, Any], kind: str, cluster: str) -> str:
    """mbatchd's subject: ``Job 12: <name> in cluster <c> Done`` (``Exited``; ``Started`` for ``-B``)."""
    word = "Started" if kind == "BEGIN" else "Done" if job["state"] == "DONE" else "Exited"
    return f"Job {lsf_jobid(job)}: <{_name(job)}> in cluster <{cluster}> {word}"


def _hosts(job: dict[str, Any]) -> list[str]:
    placement = job.get("placement")
    try:
        return [h for h, _n in (json.loads(placement) if isinstance(placement, str) else placement or [])]
    except (ValueError, TypeError):
        return [job["head_host"]] if job.get("head_host") else []


def _file(job: dict[str, Any], pattern: str | None) -> str | None:
    """An output file as the job's run names it (its codes expanded, relative to its directory)."""
    if not pattern:
        return None
    known = jobfiles.values(jobid=job["id"], array_id=job.get("array_id"), index=job.get("array_index"),
                            name=job.get("name"), command=_command(job), user=job.get("user"),
                            host=job.get("head_host"))
    path = jobfiles.expand(pattern, known)
    return path if path.startswith("/") or not job.get("cwd") else f"{job['cwd'].rstrip('/')}/{path}"


def body(job: dict[str, Any], family: str, cluster: str) -> str:
    """What happened, and what to look at next: state and why, exit status, times, hosts, files, and the
    commands that show more, in the words of the family the job was submitted with."""
    jid, ended = job["id"], job["state"] in _ENDED
    if family == LSF:
        state = ("Successfully completed." if job["state"] == "DONE" else
                 f"Exited with exit code {job.get('exit_code') or 0}." if ended else "Dispatched.")
        see = [f"bjobs -l {lsf_jobid(job)}", f"bhist -l {lsf_jobid(job)}"]
    else:
        state = (f"{slurm_state(job)}, exit code {job.get('exit_code') or 0}" if ended else
                 "RUNNING" if job["state"] == "RUN" else "PENDING" if job["state"] == "PEND" else job["state"])
        see = [f"scontrol show job {jid}", f"sacct -j {jid}"]
    rows = [("Job", f"{lsf_jobid(job) if family == LSF else jid} ({_name(job)})"), ("User", job.get("user")),
            ("Queue", job.get("queue")), ("Cluster", cluster), ("State", state), ("Reason", job.get("reason")),
            ("Signal", job.get("exit_signal")),
            ("Submitted", formats.slurm_clock(job.get("submit_time"), "")),
            ("Started", formats.slurm_clock(job.get("start_time"), "")),
            ("Ended", formats.slurm_clock(job.get("end_time"), "") if ended else ""),
            ("Run time", formats.slurm_elapsed(_seconds(job.get("start_time"), job.get("end_time")))
             if ended and job.get("start_time") else ""),
            ("Hosts", " ".join(_hosts(job))), ("Work dir", job.get("cwd")), ("Command", " ".join(_command(job))),
            ("Output", _file(job, job.get("stdout"))), ("Errors", _file(job, job.get("stderr")))]
    lines = [f"{k + ':':<11}{v}" for k, v in rows if v]
    return "\n".join([*lines, "", "More: " + "; ".join(see), ""])
