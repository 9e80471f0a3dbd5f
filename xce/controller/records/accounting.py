"""Accounting records: what a finished job declared against what it was measured using.

A record is written when a job ends (DONE or EXIT: finished, failed, killed, lost) for every
resource it declared or was measured on, with the peak and the mean of its usage ticks. The
running peak, sum and count are folded into the job row as ticks arrive (see
:func:`xce.controller.hosts.fleet._fold_usage`), so ending a job costs nothing proportional to its
length and no tick has to be kept.

Declared is the whole job's reservation: each primary's per-task ``rusage`` amount times its
tasks, from the scheduler-facing requirement (which already holds ``requests``). Measured names
come in the worker's vocabulary and are mapped through the configuration's ``resource_names``.

The drift report reads only consumable capacities: ``mem`` and domain-prefixed resources.
``cpu_ms`` (CPU time, milliseconds) is recorded but never reported: it is a cumulative counter, not a
capacity anyone reserves, so "never declared" would be noise. The kernel's memory mark (``mem_peak``)
counts toward the memory record's peak, and the split of CPU time into user and system is kept only
in the job's usage (:mod:`xce.protocol.usage`). Some resources are measured from a worker
counter of another name (:data:`DERIVED`). Every job, whether it declares ``xce.io/cpu-milli`` or
not, gets that resource measured from ``cpu_ms``: CPU time over the run time, in thousandths of a CPU (the run's
average; a per-tick peak of a cumulative counter would be noise). A job that declares
``xce.io/gpu`` gets it measured from ``gpu_util_milli`` (NVML's utilisation of the job's own devices,
summed, in thousandths of a GPU): the mean over its ticks in whole GPUs, the declaration's unit,
rounded half up, so 0.25 busy of 2 declared is 0 and 1.6 busy is 2; the exact mean stays in the
run's ``gpu_util_milli`` record and in the job's usage. For both, peak and mean are that one
average: the drift report compares the peak, and the average is what was used of the reservation
(a GPU is held whole for the run, however briefly it is busy). A resource with no
sample on a run is skipped for that run: a run that was never measured says nothing about its
declaration, and counting it as 0 would call every declaration "far below"; such resources are
listed by :func:`unmeasured` instead, so a declaration nobody can check is not silently passed over.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import sqlalchemy as sa

from xce.accounting.drift import DriftReport, Thresholds, Unmeasured, UsageRecord, drift_report
from xce.controller.store.schema import job_accounting, jobs
from xce.endcodes import MEMLIMIT
from xce.protocol import usage as proto

MEMORY = "mem"
CPU_MILLI = "xce.io/cpu-milli"
CPU_MS = proto.CPU_MS
#: Tick names with no record of their own: the memory mark joins the memory record's peak.
UNRECORDED = frozenset({proto.MEM_PEAK, proto.CPU_USER_MS, proto.CPU_SYS_MS})
GPU = "xce.io/gpu"
GPU_UTIL = "gpu_util_milli"


def is_capacity(resource: str) -> bool:
    """Whether drift means anything for ``resource``: something reserved, not a counter."""
    if resource == MEMORY:
        return True
    domain, slash, _ = resource.partition("/")
    return bool(slash) and "." in domain


@lru_cache(maxsize=1024)
def _declared_from_request(text: str, tasks: int) -> tuple[tuple[str, int], ...] | None:
    """Parsing is cached because array elements share one requirement text."""
    from xce.core.resreq import RequestSyntaxError, parse_request

    try:
        parsed = parse_request(text, tasks)
    except (RequestSyntaxError, ValueError):
        return None
    total: dict[str, int] = {}
    # With alternatives the placed one is not recorded on the job; the first is what the user
    # reached for, and alternatives of one job type rarely differ in how much they reserve.
    for primary in parsed.primaries:
        for name, amount in primary.rusage:
            total[name] = total.get(name, 0) + amount * primary.tasks
    return tuple(sorted(total.items()))


def declared(job: dict[str, Any]) -> dict[str, int]:
    tasks = int(job.get("tasks") or 1)
    text = job.get("sched_request") or job.get("request") or ""
    found = _declared_from_request(text, tasks)
    if found is not None:
        return dict(found)
    requests = json.loads(job["requests"]) if job.get("requests") else {}
    return {k: int(v) * tasks for k, v in requests.items()}


def measured(usage: dict[str, Any], names: dict[str, str]) -> dict[str, tuple[int, int, int]]:
    """resource -> (peak, mean, samples), with worker names mapped to resource names."""
    peak: dict[str, int] = {}
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    samples = int(usage.get("samples", 0))
    sums = usage.get("sum")
    counts = usage.get("count", {})
    for wire, value in usage.get("peak", {}).items():
        if wire in UNRECORDED:
            continue
        res = names.get(wire, wire)
        peak[res] = max(peak.get(res, 0), int(value))
        if sums is not None and wire in sums:
            total[res] = total.get(res, 0) + float(sums[wire])
            count[res] = count.get(res, 0) + int(counts.get(wire, samples))
        else:  # a row folded before sums were kept: its mean and sample count stand in
            n = samples or 1
            total[res] = total.get(res, 0) + float(usage.get("mean", {}).get(wire, value)) * n
            count[res] = count.get(res, 0) + n
    out = {res: (peak[res], round(total[res] / count[res]) if count[res] else 0, count[res]) for res in peak}
    mark = usage.get("peak", {}).get(proto.MEM_PEAK)
    if mark is not None:  # the kernel's high-water mark, which samples miss between them
        res = names.get(proto.MEMORY_RSS, proto.MEMORY_RSS)
        top, mean, n = out.get(res, (0, 0, 0))
        out[res] = (max(top, int(mark)), mean if n else int(mark),
                    n or int(counts.get(proto.MEM_PEAK, samples or 1)))
    return out


def cpu_milli(usage: dict[str, Any], start: int, end: int) -> tuple[int, int, int] | None:
    """(peak, mean, samples) of the CPUs a run kept busy, in milli-CPUs: its CPU time over the time
    from its start to the tick that measured it (the last tick, not the end: the CPU time a process
    used after its last tick is never measured, and counting that time would dilute the figure)."""
    peak = usage.get("peak", {})
    if CPU_MS not in peak:
        return None
    seen = int(usage.get("ts") or end or 0)
    if end:
        seen = min(seen, end) if seen else end
    seconds = (seen - start) / 1e9
    if seconds <= 0:
        return None
    value = round(float(peak[CPU_MS]) / seconds)  # ms of CPU per s of run: thousandths of a CPU
    return value, value, int(usage.get("count", {}).get(CPU_MS, usage.get("samples", 1)))


def gpus_busy(usage: dict[str, Any], start: int, end: int) -> tuple[int, int, int] | None:
    """(peak, mean, samples) of the GPUs a run kept busy, in whole GPUs: the mean of its
    ``gpu_util_milli`` ticks, rounded half up. None when no tick carried the figure (the workers it
    ran on could not read its devices through NVML): unmeasured, not idle."""
    n = int(usage.get("count", {}).get(GPU_UTIL, 0))
    if not n or GPU_UTIL not in usage.get("sum", {}):
        return None
    value = int(float(usage["sum"][GPU_UTIL]) / n / 1000 + 0.5)
    return value, value, n


#: Declared resources measured from worker counters of other names: resource -> f(usage, start,
#: end) -> (peak, mean, samples), or None where the counter never arrived.
DERIVED = {CPU_MILLI: cpu_milli, GPU: gpus_busy}
#: Derived for every job, declared or not: the CPU time of a job's processes is measured whatever it
#: asked for, and a job that burns cores it never declared is the worst drift there is
#: (job-resources.md, "measured but never declared"). GPU use is measured only on the devices a
#: job was handed, which it must have declared, so it needs no such entry.
ALWAYS_DERIVED = frozenset({CPU_MILLI})


def rows(job: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """The accounting rows of a job that has just ended; none for a job that never started."""
    if not job.get("start_time"):
        return []
    usage = json.loads(job["usage"]) if job.get("usage") else {}
    decl = declared(job)
    meas = measured(usage, names)
    end = job.get("end_time") or 0
    base = {"jobid": job["id"], "job_type": job.get("job_type") or "", "queue": job["queue"], "user": job["user"],
            "tasks": int(job.get("tasks") or 1), "state": job["state"], "exit_code": job.get("exit_code"),
            "exit_signal": job.get("exit_signal"), "start_time": job["start_time"], "end_time": end,
            "run_time": max(0, end - job["start_time"])}
    for res, derive in DERIVED.items():
        got = derive(usage, job["start_time"], end) if decl.get(res) or res in ALWAYS_DERIVED else None
        if got is not None:
            meas[res] = got
    out = []
    for res in sorted(set(decl) | set(meas) | {MEMORY}):
        peak, mean, samples = meas.get(res, (0, 0, 0))
        out.append(dict(base, resource=res, declared=int(decl.get(res, 0)), peak=peak, mean=mean, samples=samples))
    return out


def rewrite(conn: sa.engine.Connection, job: dict[str, Any], names: dict[str, str]) -> None:
    """Replace a job's records: the worker's final report can arrive after the job was already
    killed or lost, with the last tick and the real exit status."""
    new = rows(job, names)
    conn.execute(sa.delete(job_accounting).where(job_accounting.c.jobid == job["id"]))
    if new:
        conn.execute(job_accounting.insert(), new)


def records(conn: sa.engine.Connection, job_type: str | None = None) -> list[UsageRecord]:
    """The measured records, each memory one marked when its run was killed at its memory limit."""
    q = (sa.select(job_accounting.c.job_type, job_accounting.c.resource, job_accounting.c.declared,
                   job_accounting.c.peak, jobs.c.end_code)
         .select_from(job_accounting.outerjoin(jobs, jobs.c.id == job_accounting.c.jobid))
         .where(job_accounting.c.samples > 0))
    if job_type is not None:
        q = q.where(job_accounting.c.job_type == job_type)
    return [UsageRecord(t, r, int(d), int(p), r == MEMORY and end == MEMLIMIT)
            for t, r, d, p, end in conn.execute(q) if is_capacity(r)]


def unmeasured(conn: sa.engine.Connection, job_type: str | None = None) -> list[Unmeasured]:
    """Resources jobs declared that no run was ever measured on: nothing can say whether the
    declaration is right (no worker or provider measures them per job)."""
    c = job_accounting.c
    q = (sa.select(c.job_type, c.resource, sa.func.count(), sa.func.max(c.samples))
         .where(c.declared > 0).group_by(c.job_type, c.resource))
    if job_type is not None:
        q = q.where(c.job_type == job_type)
    return [Unmeasured(t, r, int(n)) for t, r, n, most in conn.execute(q).all()
            if not most and is_capacity(r)]


def report(conn: sa.engine.Connection, job_type: str | None, min_samples: int, thresholds: Thresholds) -> DriftReport:
    rep = drift_report(records(conn, job_type), job_type=job_type, min_samples=min_samples, thresholds=thresholds)
    rep.unmeasured = sorted(unmeasured(conn, job_type), key=lambda u: (u.job_type, u.resource))
    return rep
