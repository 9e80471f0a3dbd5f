"""XCE's job states and end codes as Slurm's state words and codes (``RUNNING``/``R``, ...).

A finished job's word comes from its structured end code (:mod:`xce.endcodes`), never from its
prose ``reason``: ``KILLED`` is ``CANCELLED``, ``RUNLIMIT`` ``TIMEOUT``, ``MEMLIMIT``
``OUT_OF_MEMORY`` and so on, so that clients polling ``squeue``/``sacct`` see what Slurm would show.
"""

from __future__ import annotations

from xce.endcodes import exit_code_of

CODES = {"PENDING": "PD", "RUNNING": "R", "SUSPENDED": "S", "COMPLETING": "CG", "COMPLETED": "CD",
         "CANCELLED": "CA", "FAILED": "F", "TIMEOUT": "TO", "OUT_OF_MEMORY": "OOM", "NODE_FAIL": "NF",
         "PREEMPTED": "PR", "BOOT_FAIL": "BF", "DEADLINE": "DL", "REQUEUED": "RQ", "CONFIGURING": "CF"}

_LIVE = {"PEND": "PENDING", "RUN": "RUNNING", "UNKWN": "RUNNING", "SSUSP": "SUSPENDED", "USUSP": "SUSPENDED",
         "DONE": "COMPLETED"}
_ENDS = {"DONE": "COMPLETED", "KILLED": "CANCELLED", "RUNLIMIT": "TIMEOUT", "MEMLIMIT": "OUT_OF_MEMORY",
         "NODE_FAIL": "NODE_FAIL", "PREEMPTED": "PREEMPTED", "NOT_STARTED": "FAILED", "EXIT": "FAILED"}

#: squeue's default ``-t``: the states of jobs still in the system.
DEFAULT_SQUEUE = ("PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING")

#: Why a job waits, as squeue's reason codes: XCE's pend category (the ``step`` of its first
#: structured pend reason, or the controller's gate), and where one category covers several of
#: Slurm's codes, the first words of the reason's text that tell them apart (``queue closed`` vs
#: ``queue inactive``). A category missing here has no code of Slurm's nearer than ``Resources``.
PEND_REASONS: dict[str, str | tuple[tuple[str, str], ...]] = {
    "held": "JobHeldUser",  # JobHeldAdmin when someone else held it (pend_reason)
    "depend": (("dependency can never be met", "DependencyNeverSatisfied"), ("", "Dependency")),
    "begin": "BeginTime",
    "limit": "JobArrayTaskLimit",
    "fcfs": "Priority",
    "backfill": "Priority",
    "reservation": "Priority",
    "slots": "Resources",
    "rusage": "Resources",
    "span": "Resources",
    "shared": "Resources",
    "exclusive": "Resources",
    "preempt": "Resources",
    "unknown-resource": "BadConstraints",
    "request": "BadConstraints",
    "cluster": "BadConstraints",
    "select": "ReqNodeNotAvail",  # the hosts it may use are closed or down
    # inactive: it takes jobs, runs none (Slurm's DOWN); closed: neither (INACTIVE); its own limit
    "queue": (("queue inactive", "PartitionDown"), ("queue limit", "QOSGrpJobsLimit"),
              ("queue", "PartitionInactive")),
    "user": "QOSMaxJobsPerUserLimit",
}


def word(job: dict) -> str:
    """The Slurm state word of a job record of ``GET /v1/jobs``."""
    state = job["state"]
    if state != "EXIT":
        return _LIVE.get(state, "RUNNING")
    return _ENDS.get((job.get("end") or {}).get("code") or "EXIT", "FAILED")


def code(job: dict) -> str:
    return CODES[word(job)]


def pend_reason(job: dict) -> str:
    """squeue's ``%r`` for a pending job (:data:`PEND_REASONS`); ``None`` before the scheduler has
    looked at it, as Slurm says for a job no pass has considered."""
    category = job.get("pend_category")
    if not category:
        return "None"
    if category == "held" and job.get("held_by") and job.get("held_by") != job.get("user"):
        return "JobHeldAdmin"
    rule = PEND_REASONS.get(category, "Resources")
    if isinstance(rule, str):
        return rule
    text = next((r.get("text") or "" for r in job.get("pend_reasons") or ()), "")
    return next((code_ for start, code_ in rule if text.startswith(start)), rule[-1][1])


#: Why a job ended, as slurmctld sets its ``state_reason`` when the job completes (``job_complete()``:
#: FAIL_TIMEOUT, FAIL_OOM, FAIL_DOWN_NODE for a lost node, FAIL_LAUNCH for one that could not start);
#: a job whose own command failed is ``NonZeroExitCode`` (FAIL_EXIT_CODE), or ``JobLaunchFailure`` when
#: a signal ended it (FAIL_LAUNCH again); a completed or cancelled job keeps ``None``.
END_REASONS = {"RUNLIMIT": "TimeLimit", "MEMLIMIT": "OutOfMemory", "NODE_FAIL": "NodeDown",
               "NOT_STARTED": "JobLaunchFailure"}


def reason(job: dict) -> str:
    """The job's reason as the controller holds it (squeue's ``%r``, ``scontrol show job``'s ``Reason=``,
    ``squeue --json``'s ``state_reason``): why it waits, or why it ended. Clients map it: PSI/J looks
    every FAILED job's reason up in its table of Slurm's codes."""
    if job["state"] == "PEND":
        return pend_reason(job)
    if job["state"] != "EXIT":
        return "None"
    end = (job.get("end") or {}).get("code") or "EXIT"
    if end == "EXIT":
        code_, _, sig = exit_code(job).partition(":")
        return "JobLaunchFailure" if code_ == "0" and sig != "0" else "NonZeroExitCode"
    return END_REASONS.get(end, "None")


def wait_reason(job: dict) -> str:
    """sacct's ``Reason``: accounting keeps the last reason a job waited for (``state_reason_prev``),
    not how it ended, so a job that ran shows ``None``."""
    return pend_reason(job) if job["state"] == "PEND" else "None"


def signal_number(name: str | None) -> int:
    if not name:
        return 0
    from xce.signals import parse_signal

    sig = parse_signal(str(name))
    return int(sig) if sig is not None else 0


def exit_code(job: dict) -> str:
    """``code:signal`` as Slurm writes a job's ``ExitCode`` (``0:15`` after a SIGTERM, ``1:0``)."""
    sig = signal_number(job.get("exit_signal"))
    code_ = exit_code_of(job.get("exit_code"), (job.get("end") or {}).get("code"))
    if code_ is None or code_ < 0 or (sig and code_ >= 128):
        code_ = 0
    return f"{code_}:{sig}"


def parse_states(text: str) -> tuple[set[str] | None, str | None]:
    """``-t/--states`` (words or codes, comma-separated, any case; ``all``): the Slurm words asked for
    (None: all), or the one that is unknown."""
    wanted: set[str] = set()
    by_code = {c: w for w, c in CODES.items()}
    for part in text.split(","):
        p = part.strip().upper()
        if not p:
            continue
        if p == "ALL":
            return None, None
        if p in CODES:
            wanted.add(p)
        elif p in by_code:
            wanted.add(by_code[p])
        else:
            return set(), part.strip()
    return wanted, None
