"""``sbatch``: submit a batch script as Slurm does, through XCE's own submission path.

Options are read by the table and the parser ``#SBATCH`` lines go through
(:mod:`xce.compat.slurm.options`), then the job is built by ``xce submit``'s :func:`~xce.cli.submit.job_request`: one grammar for
both, so an option means the same on the command line and in the script (the command line wins).
What is Slurm's own is here: the script comes from a file, ``/dev/stdin``, standard input or
``--wrap``, must start with ``#!``; output goes to ``slurm-%j.out`` (``slurm-%A_%a.out`` for an
array) in the working directory, truncated; the job is named after its script; the answer is
``Submitted batch job N`` (``--parsable``: ``N``); with ``-W/--wait`` sbatch then waits for the job
(every element of an array) to end and exits with its exit code, as Slurm's does.
"""

from __future__ import annotations

import os
import sys

from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "sbatch"
NOT_A_SCRIPT = ("This does not look like a batch script.  The first\n"
                "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
                "sbatch: error: For instance: #!/bin/sh")


def main(argv: list[str]) -> int:
    from xce.cli.jobscript import Refused
    from xce.compat.slurm.options import getopt_table

    longs, shorts = getopt_table()
    try:
        opts, operands = parse(argv, longs, shorts, stop_at_operand=True)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    names = {name for name, _ in opts}
    if names & {"help", "usage"}:
        from xce.compat.slurm.tables import show_help

        show_help(PROG, names)
        return 0
    if "version" in names:
        sys.stdout.write("slurm 22.05.8\n")
        return 0
    try:
        body = build(opts, operands, environ=dict(os.environ), cwd=os.getcwd(), host=os.uname().nodename,
                     stdin=lambda: sys.stdin.buffer.read() if sys.stdin is not None else b"")
        return _post(body, "parsable" in names, next((v for n, v in opts if n == "clusters"), None),
                     "wait" in names)
    except Refused as exc:
        return _err(str(exc))


def build(opts: list[tuple[str, str | None]], operands: list[str], *, environ: dict[str, str], cwd: str, host: str,
          stdin) -> dict:
    """The job's ``POST /v1/jobs`` body for sbatch's options (as getopt read them) and operands;
    Refused with sbatch's reason."""
    from xce.cli.jobscript import Refused
    from xce.cli.spec import UsageError as SpecError
    from xce.cli.submit import SUBMIT, job_request
    from xce.compat.slurm.options import job_words

    wrap = next((v for n, v in opts if n == "wrap"), None)
    try:
        given = SUBMIT.parse([*job_words(opts), "--", "x"])
    except SpecError as exc:
        raise Refused(str(exc)) from None
    given["command"] = []
    script = None
    if wrap is not None:
        if operands:
            raise Refused("Script arguments not permitted with --wrap option")
        given["wrap"] = wrap
        name = "wrap"
    elif not operands or operands[0] in ("/dev/stdin", "-"):
        data = stdin()
        if not data.startswith(b"#!"):
            raise Refused(NOT_A_SCRIPT if data.strip() else "Batch script is empty!")
        script, name = (lambda: data), "sbatch"
    else:
        path = os.path.join(cwd, operands[0])
        try:
            with open(path, "rb") as f:
                head = f.read(2)
        except OSError:
            raise Refused(f"Unable to open file {operands[0]}") from None
        if head != b"#!":
            raise Refused(NOT_A_SCRIPT)
        given["command"] = [os.path.abspath(path), *operands[1:]]
        name = os.path.basename(path)
    body = job_request(given, stdin=script, environ=environ, cwd=cwd, host=host, prog=PROG)
    body.pop("interactive", None)  # a batch job, whatever a #BSUB -I line in its script says
    if "name" not in body and _name(name) is not None:
        body["name"] = _name(name)
    if "stdout" not in body:
        body["stdout"] = "slurm-%A_%a.out" if body.get("array") else "slurm-%j.out"
    body.setdefault("open_mode", "truncate")
    return body


def _post(body: dict, parsable: bool, clusters: str | None, wait: bool = False) -> int:
    from xce.cli.jobscript import Refused
    from xce.cli.submit import after_namesakes
    from xce.compat.slurm import _api

    c = _api.client()
    try:
        body = after_namesakes(body, lambda name: [j["jobid"] for j in _api.jobs(c, name=name)["jobs"]])
        res = _api.request(c, "POST", "/v1/jobs", body)
    except _api.Failed as exc:
        raise Refused(f"Batch job submission failed: {exc}") from None
    jobid = res["array_id"] if res.get("array_id") is not None else res["jobid"]
    if parsable:
        sys.stdout.write(f"{jobid};{clusters}\n" if clusters else f"{jobid}\n")
    else:
        sys.stdout.write(f"Submitted batch job {jobid}\n")
    if not wait:
        return 0
    sys.stdout.flush()
    try:
        return _wait(c, jobid)
    except _api.Failed as exc:
        return _err(str(exc))


def _wait(c, jobid: int) -> int:
    """``--wait``: until the job (each element of an array) has ended, asking at growing intervals
    (0.2 s up to 2 s, a query that costs the controller one indexed lookup); the exit code is
    sbatch's ``_job_wait``: 0 when every one completed, else the highest exit status of those that
    did not (1 for one killed by a signal or ended without one)."""
    import time

    from xce.compat.slurm import _api

    pause = 0.2
    while True:
        found = _api.request(c, "GET", "/v1/jobs", job=str(jobid), user="all", since=0)["jobs"]
        if not found:  # removed from the store while waited for: nothing left to wait on
            raise _api.Failed(f"Unable to get job info for job {jobid}: Invalid job id specified")
        if all(j["state"] in ("DONE", "EXIT") for j in found):
            return max((_status(j) for j in found), default=0)
        time.sleep(pause)
        pause = min(pause * 2, 2.0)


def _status(job: dict) -> int:
    """One ended job's part of sbatch's exit code."""
    if job["state"] == "DONE":
        return 0
    code = job.get("exit_code")
    if job.get("exit_signal") or code is None or code < 0 or code >= 128:
        return 1
    return int(code) or 1


def _name(text: str) -> str | None:
    """The script's file name as the job's name, when it is one XCE takes (not ``12``, not ``x]``)."""
    from xce.jobref import RefError, check_name

    try:
        return check_name(text[:128].strip())
    except RefError:
        return None


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
