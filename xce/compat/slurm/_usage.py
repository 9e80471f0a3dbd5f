"""What a job has used, as sstat and seff read it from the job's view (``GET /v1/jobs/{id}``).

The workers measure a job as a whole (its cgroup, summed over its hosts), every report interval:
``usage.peak``/``usage.mean`` of ``memory_rss`` (bytes) and ``usage.last`` of ``cpu_time`` (whole
seconds of user and system time, all its processes). XCE has no numbered steps, so these figures
are the ``batch`` step's, the one step every job has; virtual memory, pages and disk I/O are not
measured and are left empty rather than shown as zero."""

from __future__ import annotations


def _figure(job: dict, kind: str, name: str) -> float | None:
    value = ((job.get("usage") or {}).get(kind) or {}).get(name)
    return None if value is None else float(value)


def max_rss(job: dict) -> int | None:
    """The highest resident memory seen (bytes), or None before the first report."""
    value = _figure(job, "peak", "memory_rss")
    return None if value is None else int(value)


def ave_rss(job: dict) -> int | None:
    value = _figure(job, "mean", "memory_rss")
    return None if value is None else int(value)


def cpu_seconds(job: dict) -> int | None:
    """CPU time used so far (user + system, every process of the job), or None before a report."""
    value = _figure(job, "last", "cpu_time")
    peak = _figure(job, "peak", "cpu_time")
    if value is None and peak is None:
        return None
    return int(max(value or 0, peak or 0))


def requested_memory(job: dict) -> int:
    """Memory the job asked for (bytes, all its tasks): XCE's requests are per task."""
    return int((job.get("requests") or {}).get("mem") or 0) * int(job.get("tasks") or 1)


class NotFound(Exception):
    """No job has that id; the message is Slurm's ``Invalid job id specified: N``."""


def details(c, ref: str) -> list[dict]:
    """The jobs a Slurm job id (``N``, ``A_i``, ``A_[1-3]``) names, each with its usage;
    :class:`NotFound` if none (:class:`_api.Failed` if the controller refuses)."""
    from xce.compat.slurm import _api

    found = _api.jobs(c, job=[ref], all=True)["jobs"]
    if not found:
        raise NotFound(f"Invalid job id specified: {ref}")
    return [_api.request(c, "GET", f"/v1/jobs/{j['jobid']}") for j in found]
