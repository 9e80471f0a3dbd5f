"""What a job has used, as sstat and seff read it from the job's view (``GET /v1/jobs/{id}``).

The workers measure a job as a whole (its cgroup, summed over its hosts), every report interval;
the view's ``used`` (:func:`xce.protocol.usage.used`) is the one reading of those figures every
front-end shows: ``mem_peak`` (the highest memory, bytes), ``mem_avg`` (its mean over the
reports), ``cpu_ms`` (CPU time so far, user + system, every process). XCE has no numbered steps,
so these figures are the ``batch`` step's, the one step every job has; virtual memory, pages and
disk I/O are not measured and are left empty rather than shown as zero."""

from __future__ import annotations


def _used(job: dict, name: str) -> int | None:
    value = (job.get("used") or {}).get(name)
    return None if value is None else int(value)


def max_rss(job: dict) -> int | None:
    """The highest memory seen (bytes), or None before the first report."""
    return _used(job, "mem_peak")


def ave_rss(job: dict) -> int | None:
    return _used(job, "mem_avg")


def cpu_seconds(job: dict) -> float | None:
    """CPU time used so far (user + system, every process of the job), or None before a report."""
    ms = _used(job, "cpu_ms")
    return None if ms is None else ms / 1000


def cpu_clock(seconds: float) -> str:
    """sacct's and sstat's ``TotalCPU``: ``[D-]HH:MM:SS`` from an hour, ``MM:SS.mmm`` below."""
    if seconds >= 3600:
        from xce.formats import slurm_elapsed

        return slurm_elapsed(seconds)
    ms = int(round(seconds * 1000))
    return f"{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


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
