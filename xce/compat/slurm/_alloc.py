"""What ``srun`` (outside a job) and ``salloc`` share: their options as a job, and waiting for it.

The options are sbatch's (the table ``#SBATCH`` lines go through, :mod:`xce.compat.slurm.options`,
and the same :func:`xce.cli.submit.job_request`); the job is interactive (``xce submit -I``): it waits its turn, then its command runs on the
allocation's head host with this terminal as its own (a pseudo-terminal with ``--pty``, and
always for ``salloc``'s shell), and its exit status is the program's.
"""

from __future__ import annotations

import os
import sys


def table(extra: dict[str, int], shorts_extra: dict[str, str], drop_shorts: tuple[str, ...] = ()) \
        -> tuple[dict[str, int], dict[str, str]]:
    """getopt's names for a program: sbatch's job options (not sbatch's own) and the program's ``extra``."""
    from xce.compat.slurm.options import SBATCH_ONLY, SBATCH_OPTIONS, getopt_table

    rows = [o for o in SBATCH_OPTIONS if o.name not in SBATCH_ONLY and o.name not in extra]
    longs, shorts = getopt_table(rows, extra)
    shorts = {s: full for s, full in shorts.items() if s not in drop_shorts}
    shorts.update(shorts_extra)
    return longs, shorts


def job_words(opts: list[tuple[str, str | None]]) -> list[str]:
    """``xce submit`` words for the sbatch-table options among ``opts`` (Refused for one it cannot honour)."""
    from xce.compat.slurm.options import SBATCH, SBATCH_ONLY, job_words as words

    return words(opts, {k: v for k, v in SBATCH.items() if k not in SBATCH_ONLY})


def body(words: list[str], command: list[str], prog: str) -> dict:
    """The interactive job's submission; Refused with the reason."""
    from xce.cli.interactive import prepare
    from xce.cli.jobscript import Refused
    from xce.cli.spec import UsageError
    from xce.cli.submit import SUBMIT, job_request

    try:
        given = SUBMIT.parse([*words, "--", "x"])
    except UsageError as exc:
        raise Refused(str(exc)) from None
    given["command"] = command
    b = job_request(given, stdin=None, environ=dict(os.environ), cwd=os.getcwd(), host=os.uname().nodename,
                    prog=prog)
    b.setdefault("name", os.path.basename(command[0])[:128] or "interactive")
    return prepare(b)


def run(prog: str, job: dict, *, raw: bool, announce: bool) -> int:
    """Submit ``job``, wait for it to start, be its terminal; its exit status."""
    from xce.cli import interactive as terminal
    from xce.compat.slurm import _api

    try:
        from xce.cli.submit import after_namesakes

        c = _api.client()
        job = after_namesakes(job, lambda name: [j["jobid"] for j in _api.jobs(c, name=name)["jobs"]])
        res = _api.request(c, "POST", "/v1/jobs", job)
    except _api.Failed as exc:
        return _api.fail(prog, f"Job submit/allocate failed: {exc}")
    jobid = int(res["jobid"])
    grant = terminal.wait_for_start(c, jobid)
    if isinstance(grant, int):
        return grant
    if announce:
        _say(f"{prog}: Granted job allocation {jobid}")
    code = terminal.attach(c, grant, raw and os.isatty(0))
    if announce:
        _say(f"{prog}: Relinquishing job allocation {jobid}")
    return code


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
