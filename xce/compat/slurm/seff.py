"""``seff JOBID``: a job's CPU and memory efficiency in the layout of Slurm's contributed ``seff``.

CPU Utilized is the CPU time the workers measured for the whole job (user + system, every process,
:mod:`xce.compat.slurm._usage`), against core-walltime = wall-clock time x the job's CPUs (tasks).
Memory Utilized is the highest resident memory seen; the efficiency is against what the job
requested (XCE's ``mem`` request is per task: times the tasks). A job still running is measured
so far, with seff's warning; a pending job has nothing to show.
"""

from __future__ import annotations

import sys
import time

from xce.compat.slurm import _format as fmt, _ids as ids, _states as states, _usage as usage

PROG = "seff"
USAGE = "Usage: seff [Options] <Jobid>\n       Options:\n       -h    Help menu\n       -v    Version\n       -d    Debug mode: display raw Slurm data\n"


def clock(seconds: float) -> str:
    """seff's ``time2str``: ``HH:MM:SS``, ``D-HH:MM:SS`` past a day."""
    s = int(seconds)
    days, s = divmod(s, 86400)
    return (f"{days}-" if days else "") + f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def kbytes(n: float) -> str:
    """seff's ``kbytes2str`` from bytes: ``512.00 KB``, ``1.50 GB`` (0 is ``0.00 MB``)."""
    k = n / 1024
    if k == 0:
        return "0.00 MB"
    units = ("KB", "MB", "GB", "TB", "PB")
    i = 0
    while k >= 1024 and i < len(units) - 1:
        k /= 1024
        i += 1
    return f"{k:.2f} {units[i]}"


def report(job: dict, cluster: str, now: float) -> list[str]:
    import grp
    import pwd

    try:
        group = grp.getgrgid(pwd.getpwnam(job["user"]).pw_gid).gr_name
    except KeyError:
        group = job["user"]
    state = states.word(job)
    lines = [f"Job ID: {job['jobid']}"]
    if job.get("array_id") is not None:
        lines.append(f"Array Job ID: {ids.shown(job)}")
    lines += [f"Cluster: {cluster}", f"User/Group: {job['user']}/{group}",
              f"State: {state} (exit code {states.exit_code(job).split(':')[0]})"]
    ncpus = int(job.get("tasks") or 1)
    nodes = max(1, len(fmt.nodes(job)))
    if ncpus == 1:
        lines.append(f"Cores: {ncpus}")
    else:
        lines += [f"Nodes: {nodes}", f"Cores per node: {ncpus // nodes}"]
    if state == "PENDING":
        lines.append("Efficiency not available for jobs in the PENDING state.")
        return lines
    wall = max(0.0, fmt.used(job, now))
    cpu = usage.cpu_seconds(job) or 0
    core_wall = wall * ncpus
    peak = usage.max_rss(job) or 0
    asked = usage.requested_memory(job)
    lines += [f"CPU Utilized: {clock(cpu)}",
              f"CPU Efficiency: {100 * cpu / core_wall if core_wall else 0:.2f}% of {clock(core_wall)} core-walltime",
              f"Job Wall-clock time: {clock(wall)}",
              f"Memory Utilized: {kbytes(peak)}"]
    if asked:
        lines.append(f"Memory Efficiency: {100 * peak / asked:.2f}% of {kbytes(asked)}")
    else:  # nothing requested: nothing to be efficient against, as seff says of a job without a memory TRES
        lines.append("Memory Efficiency: 0.00% of 0.00 MB")
    if state in ("RUNNING", "SUSPENDED"):
        lines.append(f"WARNING: Efficiency statistics may be misleading for {state} jobs.")
    return lines


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    words = [a for a in argv if a != "-d"]
    if any(a in ("-h", "--help") for a in words):
        sys.stdout.write(USAGE)
        return 0
    if any(a == "-v" for a in words):
        sys.stdout.write("seff Version 2.1\n")
        return 0
    bad = [a for a in words if a.startswith("-")]
    if bad:
        sys.stderr.write(f"Unknown option: {bad[0].lstrip('-')}\n" + USAGE)
        return 1
    if len(words) != 1:
        sys.stderr.write(USAGE)
        return 1
    ref = words[0]
    if ids.check(PROG, [ref]) is not None or "[" in ref:
        sys.stderr.write(f"Invalid job id: {ref}\n")
        return 1
    try:
        c = _api.client()
        job = usage.details(c, ref)[0]
        cluster = _api.request(c, "GET", "/v1/whoami").get("cluster") or "xce"
    except usage.NotFound:
        sys.stderr.write("Job not found.\n")
        return 1
    except _api.Failed as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    sys.stdout.write("\n".join(report(job, cluster, time.time())) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
