"""Held-out workloads for the policy comparison (issue 40): rigid parallel jobs drawn from the
Lublin-Feitelson model, so that a scheduling rule tuned on the shipped traces is judged on traces
it has not seen.

Why this model: its sizes (a quarter serial, the rest two-stage log-uniform and mostly powers of
two) and its run times (hyper-gamma in log space, wider jobs running longer) were fitted to the
production logs of four machines, and the shipped ``lublin_256.swf`` is one draw of it; new seeds,
machine sizes and loads give traces of the same kind with different queues.

What differs from the published model, on purpose: arrivals are Poisson at a rate set from the load
asked for (``rate = load x slots / mean(size x run time)`` of the drawn jobs), so that queues form
at a known load instead of following the model's daily cycle; and ``estimates="user"`` gives the
jobs requested times as users write them: the run time times a factor log-uniform in [1, 10],
rounded up to a round value (5 min, 15 min, 30 min, 1, 2, 4, 8, 12, 18, 24, 36, 48 h), so that
estimates are inaccurate and clustered as in real logs. ``estimates="exact"`` leaves the requested
time unknown (-1): the simulator then uses the run time, as for ``lublin_256.swf``. Run times are
at most two days (see LOG_MAX_RUN).

Deterministic: only ``random.Random(seed)`` arithmetic, so the same arguments give the same trace
on every machine.
"""

from __future__ import annotations

import math
import random

from xce.sim.swf import SwfTrace

# Batch-job parameters of the model (Lublin and Feitelson, JPDC 63(11), 2003, table of m_lublin99).
SERIAL_PROB = 0.2927
POW2_PROB = 0.6686
ULOW = 1.2305
UPROB = 0.6396
A1, B1, A2, B2 = 6.57, 0.823, 639.1, 0.0156
PA, PB = -0.003, 0.6986
#: Run times above two days (e^12.06 s) are drawn again: the first gamma's tail reaches weeks, which
#: no batch queue allows (the shipped lublin_256.swf's longest job runs 45 h).
LOG_MAX_RUN = math.log(172_800)
ROUND_LIMITS = (300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 64800, 86400, 129600, 172800)


def _size(rng: random.Random, uhi: float) -> int:
    if rng.random() < SERIAL_PROB:
        return 1
    umed = uhi - 2.5
    u = rng.uniform(ULOW, umed) if rng.random() < UPROB else rng.uniform(umed, uhi)
    if rng.random() < POW2_PROB:
        u = round(u)
    return max(1, min(int(2 ** uhi), int(round(2 ** u))))


def _run(rng: random.Random, size: int) -> int:
    p = min(1.0, max(0.0, PA * size + PB))
    while True:
        x = rng.gammavariate(A1, B1) if rng.random() < p else rng.gammavariate(A2, B2)
        if x <= LOG_MAX_RUN:
            return max(1, int(math.exp(x)))


def _estimate(rng: random.Random, run: int) -> int:
    want = run * math.exp(rng.uniform(0.0, math.log(10.0)))
    for limit in ROUND_LIMITS:
        if limit >= want:
            return limit
    return max(run, ROUND_LIMITS[-1])


def generate(jobs: int, slots: int, load: float, seed: int, estimates: str = "exact") -> SwfTrace:
    """``jobs`` jobs of the model on a machine of ``slots`` processors, offering ``load``."""
    if jobs < 1 or slots < 2 or load <= 0 or estimates not in ("exact", "user"):
        raise ValueError("need jobs >= 1, slots >= 2, load > 0, estimates 'exact' or 'user'")
    rng = random.Random(seed)
    uhi = math.log2(slots)
    sizes = [_size(rng, uhi) for _ in range(jobs)]
    runs = [_run(rng, n) for n in sizes]
    reqs = [_estimate(rng, r) for r in runs] if estimates == "user" else [-1] * jobs
    rate = load * slots * jobs / sum(n * r for n, r in zip(sizes, runs, strict=True))
    t = SwfTrace(source=f"lublin(jobs={jobs}, slots={slots}, load={load}, seed={seed}, estimates={estimates})")
    t.header = {"MaxNodes": str(slots), "MaxProcs": str(slots), "Note": "synthetic, bench.lublin"}
    now = 0.0
    for j in range(jobs):
        now += rng.expovariate(rate)
        t.jobid.append(j + 1)
        t.submit.append(int(now))
        t.run.append(runs[j])
        t.procs.append(sizes[j])
        t.req_time.append(reqs[j])
        t.used_mem.append(-1)
        t.req_mem.append(-1)
        t.user.append(rng.randrange(50))
        t.queue.append(-1)
        t.partition.append(-1)
        t.executable.append(-1)
    t.job_lines = jobs
    return t
