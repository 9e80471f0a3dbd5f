"""Deterministic synthetic workloads at a known offered load, for benchmarks at archive scale.

:func:`generate` gives Poisson arrivals of one-processor jobs with exponential run times;
:func:`generate_wide` gives parallel jobs whose sizes spread over powers of two up to the whole
machine, with log-uniform run times, the shape of LLNL-Atlas or CEA-Curie. The arrival rate comes
from the load asked for: ``rate = load * slots / mean(processors x run time)``. The same seed gives
the same trace, byte for byte, on every machine (only ``random.Random`` arithmetic is used).
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


def generate_wide(jobs: int = 20_000, nodes: int = 9216, procs_per_node: int = 1, load: float = 0.7,
                  widest: float = 1.0, seed: int = 1, users: int = 200, min_run: float = 60.0,
                  max_run: float = 86400.0) -> SwfTrace:
    """``jobs`` parallel jobs on ``nodes`` x ``procs_per_node`` processors, offering ``load``.

    A job's size is ``2**k`` processors for ``k`` uniform over 0..log2(widest x machine), so every
    decade of width is as common as the next and the widest jobs span the machine (as on Atlas,
    where a sixth of the jobs used more than 1,000 processors). Run times are log-uniform between
    ``min_run`` and ``max_run``; requested times are twice the run time, rounded up to the hour.
    """
    import math

    slots = nodes * procs_per_node
    if jobs < 0 or slots < 1 or load <= 0 or not 0 < widest <= 1 or not 0 < min_run <= max_run:
        raise ValueError("need jobs >= 0, nodes and procs_per_node >= 1, load > 0, 0 < widest <= 1, "
                         "0 < min_run <= max_run")
    rng = random.Random(seed)
    top = max(0, int(math.log2(max(1, widest * slots))))
    mean_size = sum(2**k for k in range(top + 1)) / (top + 1)
    mean_run = (max_run - min_run) / math.log(max_run / min_run) if max_run > min_run else min_run
    rate = load * slots / (mean_size * mean_run)
    t = SwfTrace(source=f"synthetic-wide(jobs={jobs}, nodes={nodes}x{procs_per_node}, load={load}, seed={seed})")
    t.header = {"MaxNodes": str(nodes), "MaxProcs": str(slots),
                "Note": "synthetic, xce.sim.synthetic.generate_wide"}
    log_lo, log_hi = math.log(min_run), math.log(max_run)
    now = 0.0
    for j in range(1, jobs + 1):
        now += rng.expovariate(rate)
        size = min(slots, 2 ** rng.randint(0, top))
        run = int(math.exp(rng.uniform(log_lo, log_hi)))
        t.jobid.append(j)
        t.submit.append(int(now))
        t.run.append(run)
        t.procs.append(size)
        t.req_time.append(-(-2 * run // 3600) * 3600)
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
