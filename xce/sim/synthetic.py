"""A deterministic synthetic workload: Poisson arrivals, exponential run times, one processor each.

It exists to measure the simulator at a scale no archive trace in the repository reaches
(200,000 jobs on 2,000 hosts) at a known offered load, so the arrival rate is derived from the
load asked for: ``rate = load * slots / mean_run``. The same seed gives the same trace, byte for
byte, on every machine (only ``random.Random`` arithmetic is used).
"""

from __future__ import annotations

import random
from pathlib import Path

from xce.sim.swf import SwfTrace


def generate(jobs: int = 200_000, slots: int = 2_000, load: float = 0.85, mean_run: float = 3600.0,
             seed: int = 1, users: int = 50) -> SwfTrace:
    """``jobs`` single-processor jobs offering ``load`` of ``slots`` on average."""
    if jobs < 0 or slots < 1 or not 0 < load or mean_run <= 0:
        raise ValueError("need jobs >= 0, slots >= 1, load > 0 and mean_run > 0")
    rng = random.Random(seed)
    rate = load * slots / mean_run
    t = SwfTrace(source=f"synthetic(jobs={jobs}, slots={slots}, load={load}, seed={seed})")
    t.header = {"MaxNodes": str(slots), "MaxProcs": str(slots), "Note": "synthetic, xce.sim.synthetic"}
    now = 0.0
    for j in range(1, jobs + 1):
        now += rng.expovariate(rate)
        run = max(1, int(rng.expovariate(1.0 / mean_run)))
        t.jobid.append(j)
        t.submit.append(int(now))
        t.run.append(run)
        t.procs.append(1)
        t.req_time.append(run * 2)
        t.used_mem.append(-1)
        t.req_mem.append(-1)
        t.user.append(rng.randrange(users))
        t.queue.append(-1)
        t.partition.append(-1)
        t.executable.append(-1)
    t.job_lines = jobs
    return t


def write_swf(trace: SwfTrace, path: str | Path) -> None:
    """Write ``trace`` as an SWF file that :func:`xce.sim.swf.read_swf` reads back identically."""
    with open(path, "w", encoding="utf-8") as fh:
        for key, value in trace.header.items():
            fh.write(f"; {key}: {value}\n")
        for i in range(len(trace)):
            fh.write(f"{trace.jobid[i]} {trace.submit[i]} -1 {trace.run[i]} {trace.procs[i]} -1 "
                     f"{trace.used_mem[i]} {trace.procs[i]} {trace.req_time[i]} {trace.req_mem[i]} 1 "
                     f"{trace.user[i]} -1 {trace.executable[i]} {trace.queue[i]} {trace.partition[i]} -1 -1\n")


if __name__ == "__main__":
    import sys

    write_swf(generate(int(sys.argv[2]) if len(sys.argv) > 2 else 200_000), sys.argv[1])
