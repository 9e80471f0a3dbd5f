"""What ``srun`` (outside a job) and ``salloc`` share: their options as a job, and waiting for it.

The options are sbatch's (the same ``#SBATCH`` table, the same :func:`xce.cli.submit.job_request`);
the job is interactive (``xce submit -I``): it waits its turn, then its command runs on the
allocation's head host with this terminal as its own (a pseudo-terminal with ``--pty``, and
always for ``salloc``'s shell), and its exit status is the program's.
"""

from __future__ import annotations

import os
import sys

from xce.compat.slurm._getopt import NONE, OPTIONAL, REQUIRED

#: Options of the sbatch table that are not the allocation's, for these two programs.
NOT_HERE = ("array", "wrap", "parsable", "output", "error", "open-mode", "signal")


def table(extra: dict[str, int], shorts_extra: dict[str, str], drop_shorts: tuple[str, ...] = ()) \
        -> tuple[dict[str, int], dict[str, str]]:
    from xce.cli.jobscript import SBATCH, SBATCH_SHORT

    kinds = {True: REQUIRED, False: NONE, "optional": OPTIONAL}
    longs = {name[2:]: kinds[takes] for name, (takes, _) in SBATCH.items() if name[2:] not in NOT_HERE}
    longs.update(extra)
    shorts = {s[1]: full[2:] for s, full in SBATCH_SHORT.items() if full[2:] in longs and s[1] not in drop_shorts}
    shorts.update(shorts_extra)
    return longs, shorts


def job_words(opts: list[tuple[str, str | None]]) -> list[str]:
    """``xce submit`` words for the sbatch-table options among ``opts`` (Refused for one it cannot honour)."""
    from xce.cli.jobscript import SBATCH

    words: list[str] = []
    for name, value in opts:
        if "--" + name in SBATCH and name not in NOT_HERE:
            words += SBATCH["--" + name][1](value if value is not None else "")
    return words


def body(words: list[str], command: list[str]) -> dict:
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
    b = job_request(given, stdin=None, environ=dict(os.environ), cwd=os.getcwd(), host=os.uname().nodename)
    b.setdefault("name", os.path.basename(command[0])[:128] or "interactive")
    return prepare(b)


def run(prog: str, job: dict, *, raw: bool, announce: bool) -> int:
    """Submit ``job``, wait for it to start, be its terminal; its exit status."""
    from xce.cli import interactive as terminal
    from xce.compat.slurm import _api

    try:
        c = _api.client()
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
