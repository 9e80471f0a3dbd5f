"""``scancel``: kill or signal jobs by id (``N``, ``N_i``, ``N_[1-3]``), name, user or state.

Silent on success. A job that already ended is Slurm's "already completing or completed" error
line, exit 0 (clients cancel jobs that may have just ended); an unknown id is exit 1.
"""

from __future__ import annotations

import sys

from xce.compat.slurm import _ids as ids, _states as states, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "scancel"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SCANCEL.getopt()
REFUSED = {"interactive": "interactive confirmation is not offered here",
           "nodelist": "cancelling by node is not offered here: give job ids",
           "reservation": "this cluster has no reservations", "sibling": "this cluster is not federated"}


def _slurm_id(text: str) -> str:
    """``12[3]`` (XCE's answer) as ``12_3``."""
    head, bracket, rest = text.partition("[")
    return f"{head}_{rest.rstrip(']')}" if bracket and head.isdigit() else text


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    quiet = me = False
    sig = user = name = partition = None
    wanted: set[str] | None = None
    for opt, value in opts:
        if opt in REFUSED:
            return _err(REFUSED[opt])
        if opt == "signal":
            from xce.signals import parse_signal

            sig = parse_signal(value or "")
            if sig is None:
                return _err(f"Invalid job signal: {value}")
        elif opt == "quiet":
            quiet = True
        elif opt == "me":
            me = True
        elif opt == "user":
            user = value
        elif opt in ("name", "jobname"):
            name = value
        elif opt == "partition":
            partition = value
        elif opt == "state":
            wanted, bad = states.parse_states(value or "")
            if bad:
                return _err(f"Invalid job state specified: {bad}")
        elif opt in ("help", "usage"):
            tables.show_help(PROG, {opt}, REFUSED)
            return 0
        elif opt == "version":
            sys.stdout.write("slurm 22.05.8\n")
            return 0
    refs = ids.split_list(operands)
    bad = ids.check(PROG, refs)
    if bad is not None:
        return _err(f"Invalid job id {bad}")
    if not (refs or me or user or name or partition or wanted is not None):
        return _err("No job identification provided")
    body: dict = {"action": "kill"}
    if sig is not None:
        body["signal"] = sig.name
    try:
        c = _api.client()
        if wanted is not None and not refs:  # by state: find them first (the action has no state filter)
            listed = _api.jobs(c, user=user or None, name=name, queue=partition)["jobs"]
            refs = [str(j["jobid"]) for j in listed if states.word(j) in wanted]
            if not refs:
                return 0
            body["jobs"] = refs
        elif refs:
            body["jobs"] = refs
            if wanted is not None:
                listed = _api.jobs(c, job=refs, user="all")["jobs"]
                body["jobs"] = [str(j["jobid"]) for j in listed if states.word(j) in wanted]
                if not body["jobs"]:
                    return 0
        else:
            body["all"] = True
        if name is not None:
            body["name"] = name
        if partition is not None:
            body["queue"] = partition
        if user is not None:
            body["user"] = user
        answer = _api.request(c, "POST", "/v1/jobs/act", body)
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    code = 0
    for r in answer.get("results", []):
        if r.get("ok"):
            continue
        shown = _slurm_id(str(r.get("job") or r.get("jobid")))
        status = r.get("status")
        if status == 404:
            sys.stderr.write(f"{PROG}: error: Invalid job id {shown}\n")
            code = 1
        elif status == 409:
            if not quiet:
                sys.stderr.write(f"{PROG}: error: Kill job error on job id {shown}: "
                                 "Job/step already completing or completed\n")
        else:
            sys.stderr.write(f"{PROG}: error: Kill job error on job id {shown}: Access/permission denied\n")
            code = 1
    return code


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
