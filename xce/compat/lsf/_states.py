"""XCE's job states and end codes (:mod:`xce.endcodes`) as LSF's STAT words, exit codes and
``TERM_*`` exit reasons, decided from the structured fields and never from the prose ``reason``."""

from __future__ import annotations

#: LSF's words for the end codes XCE records (the word before the colon is what clients match).
TERM = {
    "RUNLIMIT": "TERM_RUNLIMIT: job killed after reaching LSF run time limit",
    "MEMLIMIT": "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit",
    "OWNER": "TERM_OWNER: job killed by owner",
    "ADMIN": "TERM_ADMIN: job killed by root or LSF administrator",
    "NODE_FAIL": "TERM_UNKNOWN: LSF cannot determine a termination reason (its host was lost)",
    "PREEMPTED": "TERM_PREEMPT: job killed after preemption",
    "CWD": "TERM_CWD_NOTEXIST: current working directory not accessible or does not exist on the execution host",
    "NOT_STARTED": "TERM_OTHER: the job could not be started",
}
SIGNALS = {"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8,
           "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14,
           "SIGTERM": 15, "SIGXCPU": 24, "SIGXFSZ": 25}


def stat(job: dict) -> str:
    """LSF's STAT: a held pending job is PSUSP; the others are XCE's own words (PEND RUN USUSP
    SSUSP DONE EXIT UNKWN)."""
    if job["state"] == "PEND" and job.get("held_by"):
        return "PSUSP"
    return job["state"]


def end_code(job: dict) -> str | None:
    end = job.get("end")
    return end.get("code") if end else None


def term_key(job: dict) -> str | None:
    """The key of :data:`TERM` for how ``job`` ended, None for a plain DONE or EXIT."""
    code = end_code(job)
    if code == "KILLED":
        by = (job.get("end") or {}).get("by")
        return "OWNER" if by in (None, job.get("user")) else "ADMIN"
    if code == "NOT_STARTED":
        return "CWD" if "director" in (job.get("reason") or "") else "NOT_STARTED"
    return code if code in TERM else None


def exit_reason(job: dict) -> str:
    key = term_key(job)
    return TERM[key] if key else ""


def exit_code(job: dict) -> str:
    """LSF's exit code of an EXIT job (a signal as 128 + its number); empty for any other."""
    if job["state"] != "EXIT":
        return ""
    from xce.endcodes import exit_code_of

    own = exit_code_of(job.get("exit_code"), end_code(job))
    if own not in (None, 0):
        return str(own)
    sig = job.get("exit_signal")
    if sig:
        number = SIGNALS.get(sig if str(sig).startswith("SIG") else f"SIG{sig}")
        if number is None and str(sig).isdigit():
            number = int(sig)
        if number is not None:
            return str(128 + number)
    return "" if own is None else str(own)
