"""``sbatch``: submit a batch script as Slurm does, through XCE's own submission path.

Options are translated by the table ``#SBATCH`` lines go through (:data:`xce.cli.jobscript.SBATCH`),
then the job is built by ``xce submit``'s :func:`~xce.cli.submit.job_request`: one grammar for
both, so an option means the same on the command line and in the script (the command line wins).
What is Slurm's own is here: the script comes from a file, ``/dev/stdin``, standard input or
``--wrap``, must start with ``#!``; output goes to ``slurm-%j.out`` (``slurm-%A_%a.out`` for an
array) in the working directory, truncated; the job is named after its script; the answer is
``Submitted batch job N`` (``--parsable``: ``N``).
"""

from __future__ import annotations

import os
import sys

from xce.compat.slurm._getopt import NONE, OPTIONAL, REQUIRED, UsageError, parse, refuse

PROG = "sbatch"
NOT_A_SCRIPT = ("This does not look like a batch script.  The first\n"
                "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
                "sbatch: error: For instance: #!/bin/sh")
#: Options of sbatch's own besides the ``#SBATCH`` table's, and those accepted and kept with the job.
OWN = {"wrap": REQUIRED, "parsable": NONE, "quiet": NONE, "help": NONE, "usage": NONE, "version": NONE,
       "test-only": NONE, "wait": NONE}
IGNORED = {"get-user-env": OPTIONAL, "kill-on-invalid-dep": REQUIRED, "propagate": OPTIONAL, "no-kill": OPTIONAL,
           "oversubscribe": NONE, "overcommit": NONE, "spread-job": NONE, "use-min-nodes": NONE,
           "mail-type": REQUIRED, "mail-user": REQUIRED, "threads-per-core": REQUIRED,
           "sockets-per-node": REQUIRED, "cores-per-socket": REQUIRED, "hint": REQUIRED, "cpu-freq": REQUIRED,
           "priority": REQUIRED, "uid": REQUIRED, "gid": REQUIRED, "acctg-freq": REQUIRED, "profile": REQUIRED,
           "tmp": REQUIRED, "mcs-label": REQUIRED, "power": REQUIRED, "distribution": REQUIRED,
           "mem-bind": REQUIRED, "export-file": REQUIRED, "deadline": REQUIRED, "delay-boot": REQUIRED,
           "ignore-pbs": NONE, "switches": REQUIRED, "thread-spec": REQUIRED, "extra-node-info": REQUIRED,
           "bb": REQUIRED, "bbf": REQUIRED, "container": REQUIRED, "tres-per-task": REQUIRED,
           "network": REQUIRED, "batch": REQUIRED, "cluster-constraint": REQUIRED, "prefer": REQUIRED}
REFUSED = {"test-only": "--test-only: this cluster does not forecast start times",
           "wait": "--wait is not offered here: poll with squeue or sacct"}


def _table() -> tuple[dict[str, int], dict[str, str]]:
    from xce.cli.jobscript import SBATCH, SBATCH_SHORT

    kinds = {True: REQUIRED, False: NONE, "optional": OPTIONAL}
    longs = {name[2:]: kinds[takes] for name, (takes, _) in SBATCH.items()}
    longs.update(OWN)
    longs.update({k: v for k, v in IGNORED.items() if k not in longs})
    shorts = {short[1]: full[2:] for short, full in SBATCH_SHORT.items()}
    shorts.update({"W": "wait", "h": "help", "V": "version", "s": "oversubscribe", "O": "overcommit",
                   "m": "distribution", "k": "no-kill"})
    return longs, shorts


def main(argv: list[str]) -> int:
    longs, shorts = _table()
    try:
        opts, operands = parse(argv, longs, shorts, stop_at_operand=True)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    from xce.cli.jobscript import SBATCH, Refused

    words: list[str] = []
    wrap = clusters = None
    parsable = False
    try:
        for name, value in opts:
            if name in REFUSED:
                return _err(REFUSED[name])
            if name == "wrap":
                wrap = value
            elif name == "parsable":
                parsable = True
            elif name in ("help", "usage"):
                sys.stdout.write("Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n")
                return 0
            elif name == "version":
                sys.stdout.write("slurm 22.05.8\n")
                return 0
            elif name == "quiet":
                continue
            elif "--" + name in SBATCH:
                if name == "clusters":
                    clusters = value
                words += SBATCH["--" + name][1](value if value is not None else "")
            else:
                words += ["--record", f"{name.replace('-', '_')}={value if value is not None else 'yes'}"]
        return _submit(words, operands, wrap, parsable, clusters)
    except Refused as exc:
        return _err(str(exc))


def _submit(words: list[str], operands: list[str], wrap: str | None, parsable: bool, clusters: str | None) -> int:
    from xce.cli.jobscript import Refused
    from xce.cli.spec import UsageError as SpecError
    from xce.cli.submit import SUBMIT, job_request
    from xce.compat.slurm import _api

    try:
        given = SUBMIT.parse([*words, "--", "x"])
    except SpecError as exc:
        raise Refused(str(exc)) from None
    given["command"] = []
    stdin = None
    if wrap is not None:
        if operands:
            raise Refused("Script arguments not permitted with --wrap option")
        given["wrap"] = wrap
        name = "wrap"
    elif not operands or operands[0] in ("/dev/stdin", "-"):
        data = sys.stdin.buffer.read() if sys.stdin is not None else b""
        if not data.startswith(b"#!"):
            raise Refused(NOT_A_SCRIPT if data.strip() else "Batch script is empty!")
        stdin, name = (lambda: data), "sbatch"
    else:
        path = operands[0]
        try:
            with open(path, "rb") as f:
                head = f.read(2)
        except OSError:
            raise Refused(f"Unable to open file {path}") from None
        if head != b"#!":
            raise Refused(NOT_A_SCRIPT)
        given["command"] = [os.path.abspath(path), *operands[1:]]
        name = os.path.basename(path)
    body = job_request(given, stdin=stdin, environ=dict(os.environ), cwd=os.getcwd(), host=os.uname().nodename)
    if "name" not in body and _name(name) is not None:
        body["name"] = _name(name)
    if "stdout" not in body:
        body["stdout"] = "slurm-%A_%a.out" if body.get("array") else "slurm-%j.out"
    body.setdefault("open_mode", "truncate")
    try:
        res = _api.request(_api.client(), "POST", "/v1/jobs", body)
    except _api.Failed as exc:
        raise Refused(f"Batch job submission failed: {exc}") from None
    jobid = res["array_id"] if res.get("array_id") is not None else res["jobid"]
    if parsable:
        sys.stdout.write(f"{jobid};{clusters}\n" if clusters else f"{jobid}\n")
    else:
        sys.stdout.write(f"Submitted batch job {jobid}\n")
    return 0


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
