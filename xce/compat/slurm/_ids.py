"""Job ids as Slurm writes them: ``N`` for a job, ``A_i`` for an element of array ``A``.

An element is its own job in XCE (its own id), so Slurm's ``%A``/``JobIDRaw`` are that id and
``%i``/``JobID`` its array form. Input is parsed by :mod:`xce.jobref`, which reads both forms."""

from __future__ import annotations


def shown(job: dict) -> str:
    """``%i``/``JobID``: ``A_i`` for an array element, else ``N``."""
    if job.get("array_id") is not None and job.get("array_index") is not None:
        return f"{job['array_id']}_{job['array_index']}"
    return str(job["jobid"])


def array_job(job: dict) -> str:
    """``%F``/``ArrayJobID``: the array's id, or the job's own."""
    return str(job["array_id"] if job.get("array_id") is not None else job["jobid"])


def array_task(job: dict) -> str:
    """``%K``/``ArrayTaskID``: the element's index, ``N/A`` outside an array."""
    return str(job["array_index"]) if job.get("array_index") is not None else "N/A"


def split_list(values: list[str]) -> list[str]:
    """``-j 1,2 -j 3`` -> ["1", "2", "3"] (job references are comma-free: ``N``, ``N_i``, ``N_[1-3]``)."""
    out: list[str] = []
    for v in values:
        depth, part = 0, ""
        for ch in v:  # a comma inside N_[1,3] belongs to the indexes
            depth += ch == "["
            depth -= ch == "]"
            if ch == "," and depth == 0:
                out.append(part.strip())
                part = ""
            else:
                part += ch
        out.append(part.strip())
    return [x for x in out if x]


def check(prog: str, refs: list[str]) -> str | None:
    """The first reference that is not a job id (``N``, ``N_i``, ``N_[..]``), else None."""
    from xce.jobref import RefError, parse_ref

    for r in refs:
        try:
            if parse_ref(r).id is None:
                return r
        except RefError:
            return r
    return None
