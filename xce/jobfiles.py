"""The names of a job's output files: one rule for LSF's and Slurm's ``%`` patterns.

Job scripts written for either system name their files with the other system's codes next to
ours, so every code of both is read everywhere (``-o``, ``-e``, ``#BSUB``, ``#SBATCH``):

====  =====================================================================================
code  becomes
====  =====================================================================================
%J    the job id; an array element's is its array's (LSF)
%I    the array index; 0 for a job that is not an array element (LSF)
%j    the job's own id, an element's own too (Slurm)
%A    the array's id; the job's own id when it is not an array element (Slurm)
%a    the array index; 4294967294 when it is not an array element, as Slurm writes it, so a
      tool that predicts ``slurm-%A_%a.out`` finds the file under the name it computed
%x    the job's name; without one, the base name of its command (Slurm names a job after its
      script)
%u    the job's owner
%N    the short name of the job's first host
%n    the node rank, %t the task rank: 0, the job's main process runs on its first host
%%    one ``%``
====  =====================================================================================

A number between ``%`` and the code pads it with zeros (``%4a`` -> ``0007``), as Slurm does. A
``%`` followed by anything else is kept as written.

The controller expands at submission what it knows (everything but the host and the ranks), so
``xce jobs`` shows the file names, and the rest when it dispatches the job: a worker's start action
names final files (:class:`xce.protocol.actions.StartJob`) and no worker expands anything. The
submission's result is still a pattern (``%%`` kept, a ``%`` in a name doubled), so the dispatch's
pass reads it exactly as if it had expanded the whole pattern alone, whatever the job is named.

Standard library only: the controller, the worker and the CLI import it.
"""

from __future__ import annotations

#: Slurm's NO_VAL, what ``%a`` is for a job that is not an array element.
NOT_AN_ARRAY_INDEX = "4294967294"
def job_name(name: str | None, command: list[str] | None) -> str:
    """``%x``: the name, else the command's base name (Slurm names a job after its script)."""
    if name:
        return name
    if command:
        return command[0].rstrip("/").rsplit("/", 1)[-1] or command[0]
    return ""


def values(*, jobid: int, array_id: int | None = None, index: int | None = None, name: str | None = None,
           command: list[str] | None = None, user: str | None = None, host: str | None = None) -> dict[str, str]:
    """What each code stands for; a code whose value is unknown (the host at submission) is absent."""
    element = array_id is not None and index is not None
    out = {
        "J": str(array_id if element else jobid),
        "I": str(index if element else 0),
        "j": str(jobid),
        "A": str(array_id if element else jobid),
        "a": str(index) if element else NOT_AN_ARRAY_INDEX,
        "x": job_name(name, command),
    }
    if user is not None:
        out["u"] = user
    if host is not None:
        out["N"] = host.split(".", 1)[0]
        out["n"] = out["t"] = "0"
    return out


def expand(pattern: str, known: dict[str, str], *, final: bool = True) -> str:
    """``pattern`` with every code of ``known`` replaced. Not ``final`` (the submission's pass), the
    result is still a pattern: ``%%`` stays and a ``%`` in a value is doubled, so the final pass
    (the dispatch's) reads the codes the first one could not fill and nothing else."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < n and pattern[j].isdigit():
            j += 1
        code = pattern[j] if j < n else ""
        if code == "%" and j == i + 1:
            out.append("%" if final else "%%")
        elif code and code in known:
            width = int(pattern[i + 1:j]) if j > i + 1 else 0
            value = known[code].zfill(width) if width else known[code]
            out.append(value if final else value.replace("%", "%%"))
        else:
            out.append(pattern[i:j + 1])
        i = j + 1
    return "".join(out)
