"""Ending a job at its run limit (``xce submit -W``/``--time``, or its queue's ``run_limit``).

The limit travels in the job's start payload and is kept among the job's ``limits`` under
``RUN_LIMIT_KEY``, which the worker's job state directory already persists: a job adopted after a
worker restart is still ended on time. Elapsed time is wall-clock time since the job started, as
LSF's RUNLIMIT counts it, so a backfilling scheduler's plan (start + limit) and the kill agree.

Reaching the limit means SIGTERM, then SIGKILL after ``GRACE_S`` (LSF's JOB_TERMINATE_INTERVAL,
Slurm's KillWait), and the job's end reason names the limit.

A job may ask to be warned first (``sbatch --signal=[B:]SIG@SECONDS``, ``bsub -wa SIG -wt MIN``): SIG
is sent that long before the limit, once, so the job can checkpoint or requeue itself: with ``B:``
to its batch shell only; otherwise, as Slurm does, to its steps (the tasks ``srun``/``xce launch``
runs on its head host) and not to the shell waiting for them, which would die of a signal it does
not trap (submitit's requeue relies on this). A job running no step then gets it in every process
(Slurm would send it nowhere; LSF's ``-wa`` signals the whole job). The warning is kept beside the limit; a worker
restarted after the warning time takes it as sent (it cannot know whether it was, and a second
warning could make a job checkpoint twice).
"""

from __future__ import annotations

from typing import Any

from xce.worker.runner import signal_number

RUN_LIMIT_KEY = "xce.io/run-limit-s"
#: The warning before the limit: its signal number, how many seconds before, and 1 for the batch shell only.
WARN_SIGNAL_KEY, WARN_BEFORE_KEY, WARN_BATCH_KEY = "xce.io/warn-signal", "xce.io/warn-before-s", "xce.io/warn-batch"
#: Seconds between SIGTERM and SIGKILL for a job that reached its run limit.
GRACE_S = 10.0


def remember(limits: dict[str, int], job: dict[str, Any]) -> None:
    """Copy the job's run limit (seconds) from its start payload into its persisted ``limits``."""
    limit = job.get("run_limit")
    if isinstance(limit, int) and limit > 0:
        limits[RUN_LIMIT_KEY] = limit
    options = job.get("options") or {}
    if options.get("warn_signal") and options.get("warn_time"):
        limits[WARN_SIGNAL_KEY] = signal_number(options["warn_signal"], 0)
        limits[WARN_BEFORE_KEY] = int(options["warn_time"])
        limits[WARN_BATCH_KEY] = int(bool(options.get("warn_batch_only")))


def warning_due(limits: dict[str, int], elapsed: float) -> bool:
    """Whether the job's warning time has come (it has a limit, a warning, and is that close to it)."""
    limit, before = limits.get(RUN_LIMIT_KEY), limits.get(WARN_BEFORE_KEY)
    return bool(limit and before and limits.get(WARN_SIGNAL_KEY) and elapsed >= limit - before)


def change(limits: dict[str, int], seconds: int) -> None:
    """A running job's new run limit (0: none), still counted from its start."""
    if seconds > 0:
        limits[RUN_LIMIT_KEY] = seconds
    else:
        limits.pop(RUN_LIMIT_KEY, None)
