"""Ending a job at its run limit (``xce submit -W``/``--time``, or its queue's ``run_limit``).

The limit travels in the job's start payload and is kept among the job's ``limits`` under
``RUN_LIMIT_KEY``, which the worker's job state directory already persists: a job adopted after a
worker restart is still ended on time. Elapsed time is wall-clock time since the job started, as
LSF's RUNLIMIT counts it, so a backfilling scheduler's plan (start + limit) and the kill agree.

Reaching the limit means SIGTERM, then SIGKILL after ``GRACE_S`` (LSF's JOB_TERMINATE_INTERVAL,
Slurm's KillWait), and the job's end reason names the limit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("xce.worker")

RUN_LIMIT_KEY = "xce.io/run-limit-s"
#: Seconds between SIGTERM and SIGKILL for a job that reached its run limit.
GRACE_S = 10.0


def remember(limits: dict[str, int], job: dict[str, Any]) -> None:
    """Copy the job's run limit (seconds) from its start payload into its persisted ``limits``."""
    limit = job.get("run_limit")
    if isinstance(limit, int) and limit > 0:
        limits[RUN_LIMIT_KEY] = limit


def change(limits: dict[str, int], seconds: int) -> None:
    """A running job's new run limit (0: none), still counted from its start."""
    if seconds > 0:
        limits[RUN_LIMIT_KEY] = seconds
    else:
        limits.pop(RUN_LIMIT_KEY, None)


def describe(seconds: int) -> str:
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def enforce(jobs: Iterable[Any], now: float | None = None) -> None:
    """Terminate every job of ``jobs`` (``JobProcess``) that has run for its limit or longer."""
    now = time.time() if now is None else now
    for jp in jobs:
        limit = jp.limits.get(RUN_LIMIT_KEY)
        if not limit or jp.secondary or jp.end_reason:
            continue
        if now - jp.started >= limit:
            why = f"killed: run limit {describe(limit)} reached (TERM_RUNLIMIT)"
            log.warning("job %s %s", jp.jobid, why)
            jp.terminate(GRACE_S, why)
