"""Usage ticks that a later tick of the same job makes redundant are not pushed into the core.

A busy cluster reports every running job's usage every few seconds; when rounds are further apart
than that (a long round, a slow replay), several ticks of one job queue up between two rounds.
Admission reads in-use only when a round begins, so of a run of consecutive JOB_RUSAGE events
only each job's last one matters, provided dropping the earlier ones leaves the core in exactly
the same state:

* ``job.last_usage`` is replaced by every tick: the last one wins either way;
* the ledger keeps ``used = max(0, actual - reserved)`` per resource and charges the difference:
  the sum of the differences is the last one's, as long as every tick names the same resources
  (``a`` then ``b`` never leaves a resource that only ``a`` named charged);
* a negative difference counts as a release (``release_epoch``), which lets jobs that failed to
  fit be tried again: dropped ticks must not hide one, so a job's values must never go down
  across the ticks that are dropped, starting from the last tick the core already has;
* a picker that overrides ``on_job_rusage`` sees every tick: nothing is dropped for it.

Only runs of consecutive JOB_RUSAGE events are coalesced, so no other event (a state change that
releases the job's resources, a host update) ever sees a different account. The replay and
determinism tests check the decisions are the same with and without it.
"""

from __future__ import annotations

from typing import Any, Sequence

from xce.core.events import JobRusage


def picker_reads_usage(core: Any) -> bool:
    """Whether the core's picker declared the usage hook (its ticks then cannot be coalesced)."""
    return core.picks_usage


def _rises(base: dict[str, Any], tick: dict[str, Any]) -> bool:
    """Same resources, none lower: applying ``tick`` after ``base`` releases nothing."""
    if tick.keys() != base.keys():
        return False
    for name, value in tick.items():
        before = base[name]
        if type(value) not in (int, float) or type(before) not in (int, float) or value < before:
            return False
    return True


def coalesce(core: Any, run: Sequence[JobRusage]) -> list[JobRusage]:
    """``run`` (consecutive usage ticks, in order) without the ticks a later one makes redundant."""
    if len(run) < 2 or len({t.jobid for t in run}) == len(run) or picker_reads_usage(core):
        return list(run)
    jobs = core.jobs
    base: dict[int, dict[str, Any]] = {}   # per job: the values in force before the tick at latest[jobid]
    latest: dict[int, int] = {}            # per job: index in run of its last tick so far
    drop = [False] * len(run)
    for i, tick in enumerate(run):
        jobid = tick.jobid
        j = latest.get(jobid)
        if j is not None:
            prev = run[j].usage
            before = base[jobid]
            # run[j] is redundant if it rose from what was in force, and this tick rose from it.
            if before and _rises(before, prev) and _rises(prev, tick.usage):
                drop[j] = True
            base[jobid] = prev
        else:
            job = jobs.get(jobid)
            base[jobid] = job.last_usage if job is not None else {}
        latest[jobid] = i
    return [t for t, d in zip(run, drop, strict=True) if not d]


def coalesce_pending(core: Any, events: Sequence[Any]) -> list[Any]:
    """``events`` with each run of consecutive usage ticks coalesced, everything else as it was."""
    out: list[Any] = []
    run: list[JobRusage] = []
    for e in events:
        if type(e) is JobRusage:
            run.append(e)
            continue
        if run:
            out += coalesce(core, run)
            run = []
        out.append(e)
    if run:
        out += coalesce(core, run)
    return out
