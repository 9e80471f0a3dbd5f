"""``sattach JOBID.STEP``: attach to a running job's terminal, as XCE can.

A job has a terminal when it was started interactively (``srun --pty``, ``salloc``, ``bsub -I``,
``xce submit -I``): its head host's worker relays it to its owner or an administrator, one attach
at a time (``POST /v1/jobs/ID/attach``, :mod:`xce.cli.interactive`). Its step is ``0`` (srun's
first step) or none; a batch job has no terminal and no step to attach to, and is refused as Slurm
refuses a step that does not exist. ``--pty`` (or a terminal here) puts this terminal in raw mode.
"""

from __future__ import annotations

import sys

from xce.compat.slurm import _ids as ids
from xce.compat.slurm._getopt import NONE, REQUIRED, UsageError, parse, refuse

PROG = "sattach"
LONGS = {"pty": NONE, "quiet": NONE, "label": NONE, "layout": NONE, "input-filter": REQUIRED,
         "output-filter": REQUIRED, "error-filter": REQUIRED, "verbose": NONE, "version": NONE, "help": NONE,
         "usage": NONE}
SHORTS = {"Q": "quiet", "l": "label", "v": "verbose", "V": "version", "h": "help", "u": "usage"}
#: The steps of an interactive job: srun's first step, and the job itself.
STEPS = ("0", "")


def main(argv: list[str]) -> int:
    from xce.cli.client import ApiError, Unreachable, describe
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    names = {n for n, _ in opts}
    if names & {"help", "usage"}:
        sys.stdout.write("Usage: sattach [options] <jobid.stepid>\n")
        return 0
    if "version" in names:
        sys.stdout.write("slurm 23.11.0\n")
        return 0
    if names & {"input-filter", "output-filter", "error-filter", "label", "layout"}:
        return _api.fail(PROG, "--input-filter, --output-filter, --error-filter, --label and --layout are not "
                               "offered: the job has one terminal, attached whole")
    if len(operands) != 1:
        return refuse(PROG, "you must specify exactly one job step (jobid.stepid)")
    job, dot, step = operands[0].partition(".")
    if ids.check(PROG, [job]) is not None or "[" in job:
        return _api.fail(PROG, f"Invalid job step id: {operands[0]}")
    try:
        c = _api.client()
        found = _api.jobs(c, job=[job], all=True, limit=2)["jobs"]
        if not found:
            return _api.fail(PROG, f"Invalid job id specified: {job}")
        jobid = found[0]["jobid"]
        if step not in STEPS:
            return _api.fail(PROG, f"Job step {job}.{step} does not exist")
        try:
            grant = c.request("POST", f"/v1/jobs/{jobid}/attach", body={})
        except ApiError as exc:
            text = "; ".join(describe(exc))
            if "not interactive" in text:  # a batch job: no step of its runs on a terminal
                return _api.fail(PROG, f"Job step {job}.{step or '0'} does not exist: job {job} is a batch job, "
                                       "with no terminal to attach to (only srun --pty, salloc and bsub -I jobs have one)")
            return _api.fail(PROG, text)
        except Unreachable as exc:
            return _api.fail(PROG, f"Unable to contact slurm controller (connect failure): {exc}")
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    from xce.cli.interactive import attach

    return attach(c, grant, raw="pty" in names or sys.stdin.isatty())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
