"""``sprio``: the factors of pending jobs' priorities, in sprio's columns (``-o`` codes, ``-l``, ``-n``).

XCE orders pending jobs by their queue's priority first, then within the queue by the queue's
picker: the job's own priority and its age (first come, first served), or the owner's fair-share
factor in a fair-share queue. So the columns are those factors, not parts of a weighted sum:

=========  ==============================================================================
PRIORITY   the job's own priority (``sbatch --priority``, ``bsub -sp``, ``scontrol update``)
PARTITION  its queue's priority (a higher one is scheduled first)
AGE        minutes since it was submitted
FAIRSHARE  its owner's fair-share factor (0 to 1) in a fair-share queue, blank elsewhere
NICE       0: XCE has no nice value
=========  ==============================================================================

Slurm hides the factors whose weight is zero; the site, association, job size, QOS and TRES
factors do not exist here, so they are never shown. ``-n`` shows each factor normalized to 0-1
(over the jobs listed: the largest is 1)."""

from __future__ import annotations

import sys
import time

from xce.compat.slurm import _format as fmt, _ids as ids, _shares as shares
from xce.compat.slurm._getopt import NONE, REQUIRED, UsageError, parse, refuse

PROG = "sprio"
LONGS = {"noheader": NONE, "jobs": REQUIRED, "long": NONE, "norm": NONE, "format": REQUIRED, "partition": REQUIRED,
         "user": REQUIRED, "weights": NONE, "clusters": REQUIRED, "sort": REQUIRED, "verbose": NONE, "version": NONE,
         "help": NONE, "usage": NONE}
SHORTS = {"h": "noheader", "j": "jobs", "l": "long", "n": "norm", "o": "format", "p": "partition", "u": "user",
          "w": "weights", "M": "clusters", "S": "sort", "v": "verbose", "V": "version"}
DEFAULT = "%.15i %9r %.10Y %.10A %.10F %.10P"
LONG = "%.15i %9r %.8u %.10Y %.10A %.10F %.10P %.11N"


class Factors:
    """One pending job's factors (raw) and the largest of each among the jobs listed (``-n``)."""

    def __init__(self, job: dict, queue_priority: int, fair: float | None, now: float) -> None:
        self.job = job
        self.raw = {"Y": float(job.get("priority") or 0), "P": float(queue_priority),
                    "A": max(0.0, now - job["submit_time"] / 1e9) / 60, "F": fair}


def _value(code: str, f: Factors, top: dict[str, float], norm: bool) -> str:
    if code == "i":
        return ids.shown(f.job)
    if code == "r":
        return f.job["queue"]
    if code == "u":
        return f.job["user"]
    if code == "N":
        return "0"
    raw = f.raw[code]
    if raw is None:
        return ""
    if norm or code == "F":
        return f"{(raw / top[code] if top[code] else 0.0) if norm and code != 'F' else raw:.7f}"
    return str(int(raw))


HEADERS = {"i": "JOBID", "r": "PARTITION", "u": "USER", "Y": "PRIORITY", "A": "AGE", "F": "FAIRSHARE",
           "P": "PARTITION", "N": "NICE"}


def _fairness(c, queues: set[str]) -> dict[tuple[str, str], float]:
    """(queue, owner) -> factor, for the fair-share queues among ``queues``; owner is a user or project."""
    out = {}
    for q in shares.fair_queues(c):
        if q["name"] in queues:
            view = shares.standing(c, q["name"])
            for o in view["owners"]:
                out[(q["name"], ("user:" if view["by"] == "user" else "project:") + o["name"])] = o["factor"]
    return out


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
        if operands:
            return _api.fail(PROG, f"Unknown arguments: {' '.join(operands)}")
    except UsageError as exc:
        return refuse(PROG, str(exc))
    header, text, norm, refs, users, partitions = True, DEFAULT, False, [], [], []
    for name, value in opts:
        if name == "noheader":
            header = False
        elif name == "long":
            text = LONG
        elif name == "norm":
            norm = True
        elif name == "format":
            text = fmt.unquote(value or "")
        elif name == "jobs":
            refs += ids.split_list([value or ""])
        elif name == "user":
            users += [u.strip() for u in (value or "").split(",") if u.strip()]
        elif name == "partition":
            partitions += [p.strip() for p in (value or "").split(",") if p.strip()]
        elif name == "weights":
            sys.stdout.write("          JOBID PARTITION   PRIORITY        AGE  FAIRSHARE  PARTITION\n"
                             "        Weights                        1          1          1\n")
            return 0
        elif name in ("help", "usage"):
            sys.stdout.write("Usage: sprio [-j jobid[,jobid...]] [-u user_name[,user_name...]] [-p partition] "
                             "[-o format] [-h] [-l] [-n] [-w]\n")
            return 0
        elif name == "version":
            sys.stdout.write("slurm 23.11.0\n")
            return 0
    try:
        parts = fmt.percent_codes(text, HEADERS, "job")
    except ValueError as exc:
        return _api.fail(PROG, exc)
    bad = ids.check(PROG, refs)
    if bad is not None:
        return _api.fail(PROG, f"Invalid job id: {bad}")
    try:
        c = _api.client()
        found = _api.jobs(c, job=refs or None, user=users or "all", state="PEND")["jobs"]
        found = [j for j in found if j["state"] == "PEND" and (not partitions or j["queue"] in partitions)]
        priorities = {q["name"]: q["priority"] for q in _api.request(c, "GET", "/v1/queues")["queues"]}
        fair = _fairness(c, {j["queue"] for j in found})
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    if not found:  # sprio's word when nothing pending matches
        sys.stderr.write("Unable to find jobs matching user/id(s) specified\n" if refs or users else "")
        if refs or users:
            return 1
    now = time.time()
    rows = [Factors(j, priorities.get(j["queue"], 0),
                    fair.get((j["queue"], f"user:{j['user']}"), fair.get((j["queue"], f"project:{j.get('project')}"))),
                    now) for j in found]
    fair_queues = {q for q, _ in fair}
    for r in rows:  # an owner with no usage yet in a fair-share queue has the full factor
        if r.raw["F"] is None and r.job["queue"] in fair_queues:
            r.raw["F"] = 1.0
    top = {k: max((r.raw[k] or 0.0 for r in rows), default=0.0) for k in ("Y", "P", "A", "F")}
    out = []
    if header:
        out.append("".join(lit if code is None else fmt.cell(HEADERS[code], w, right) for lit, code, w, right in parts))
    for r in rows:
        out.append("".join(lit if code is None else fmt.cell(_value(code, r, top, norm), w, right)
                           for lit, code, w, right in parts))
    sys.stdout.write("\n".join(out) + "\n" if out else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
