"""The closed loop: a trace's jobs arrive, the production core decides, the simulated cluster obeys.

Time only moves when something happens: a heap holds the finish times of running jobs, the trace
(sorted by submit time) is walked with a cursor, and at each timestamp every event of that
timestamp is pushed (job ends as one JOB_STATE_CHANGE DONE each, then all submissions as ONE
JOBS_PUSH), followed by ONE ``BeginRound`` -- unless no job is pending or suspended, when a round
could decide nothing and is skipped. The core's decisions are obeyed at once: a dispatched
job starts now and finishes ``run time`` later; a preemption victim is suspended at the same
timestamp (JOB_STATE_CHANGE SSUSP) and another round runs so the preemptor can take its slots; a
resumed job is confirmed (JOB_STATE_CHANGE RUN) and finishes after the run time it had left.
When nothing is left to happen, jobs still pending can never start and are reported as such.

Per-job state lives in flat arrays indexed like the trace, never in one object per job; a job's
``JobSpec`` is built when it is submitted, its id is looked up only while it is in the system, and
its placement is kept packed (:mod:`xce.sim.placement`), so memory stays bounded on archive traces
of 300,000 jobs or with jobs 9,216 hosts wide. The decision sink is a bare ``list.append``: the
loop itself must cost little next to the core.
"""

from __future__ import annotations

import heapq
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from xce.core import SchedulerCore, events as ev
from xce.core.decisions import Dispatch, Preempt, Resume
from xce.core.specs import DONE, RUN, SSUSP, JobSpec, ProjectSpec
from xce.sim.cluster_file import SimCluster
from xce.sim.placement import WIDE, Placements
from xce.sim.swf import SwfTrace

NS = 1_000_000_000
#: Rounds at one timestamp before the loop calls it a preemption ping-pong rather than progress.
MAX_ROUNDS_PER_TS = 1000


class SimulationError(RuntimeError):
    """The loop cannot go on (for example, preemption that never settles at one timestamp)."""


@dataclass(slots=True)
class SimResult:
    trace: SwfTrace
    cluster: SimCluster
    queue_of: list[str]
    #: Per trace index, seconds; -1 = never started / never ended.
    start: array
    end: array
    #: Where each job ran, packed (see :mod:`xce.sim.placement`); ``placement[i]`` gives the pairs.
    placement: Placements
    #: Times a job was suspended by preemption, per trace index.
    preemptions: array
    #: Trace indices of jobs larger than the simulated cluster: never submitted to the core.
    too_large: list[int] = field(default_factory=list)
    #: After the rounds of each timestamp: time (s), busy slots, pending jobs.
    series_t: array = field(default_factory=lambda: array("q"))
    series_busy: array = field(default_factory=lambda: array("q"))
    series_pending: array = field(default_factory=lambda: array("q"))
    events: int = 0
    rounds: int = 0
    wall_s: float = 0.0
    decisions: int = 0

    @property
    def never_started(self) -> list[int]:
        """Jobs the core held but never started (jobs too large for the cluster are not among them)."""
        rejected = set(self.too_large)
        return [i for i, s in enumerate(self.start) if s < 0 and i not in rejected]


def _user(u: int) -> str:
    return f"u{u}" if u >= 0 else "unknown"


def job_queues(trace: SwfTrace, cluster: SimCluster, from_trace: bool) -> list[str]:
    """Every job's queue: the cluster's default queue, or ``q<N>`` for SWF queue number N; a
    workload that names its queues (XCE JSON-lines) keeps its own."""
    if trace.names is not None:
        return list(trace.names.queue)
    if not from_trace:
        return [cluster.default_queue] * len(trace)
    return [f"q{q}" if q >= 0 else cluster.default_queue for q in trace.queue]


class _Specs:
    """Builds each job's ``JobSpec`` when the job is submitted, never all of them at once.

    Requested memory becomes a per-task reservation only on a cluster that has memory: on one
    without, every such job would pend forever ("a name nobody advertises counts as zero").
    Request strings and user names are shared between jobs.
    """

    __slots__ = ("trace", "queues", "mem", "requests", "users", "names")

    def __init__(self, trace: SwfTrace, cluster: SimCluster, queues: list[str]) -> None:
        self.trace = trace
        self.queues = queues
        self.mem = cluster.has_mem
        self.requests: dict[int, str] = {}
        self.users: dict[int, str] = {}
        self.names = trace.names

    def __call__(self, i: int) -> JobSpec:
        trace = self.trace
        names = self.names
        if names is not None:  # a workload from the cluster's own history: its names and requests
            return JobSpec(jobid=trace.jobid[i], user=names.user[i], queue=self.queues[i], project=names.project[i],
                           job_type=names.job_type[i], priority=names.priority[i], queue_time=trace.submit[i] * NS,
                           request=names.request[i] if self.mem else "", tasks=trace.procs[i],
                           run_limit=max(0, trace.req_time[i]))  # the cluster's own limits, none included
        kb = trace.req_mem[i] if self.mem else -1
        req = self.requests.get(kb)
        if req is None:
            req = self.requests[kb] = f"rusage[mem={kb}K]" if kb > 0 else ""
        u = trace.user[i]
        user = self.users.get(u)
        if user is None:
            user = self.users[u] = _user(u)
        exe = trace.executable[i]
        return JobSpec(jobid=trace.jobid[i], user=user, queue=self.queues[i], project="default",
                       job_type=str(exe) if exe >= 0 else "", queue_time=trace.submit[i] * NS,
                       request=req, tasks=trace.procs[i], run_limit=run_limit(trace, i))


def run_limit(trace: SwfTrace, i: int) -> int:
    """The job's run limit: its requested time (SWF field 9) when the trace has one, else its run
    time, the exact estimate the literature assumes when a trace records none (at least 1 s: 0
    means no limit)."""
    req = trace.req_time[i]
    return req if req > 0 else max(1, trace.run[i])


def runs_for(trace: SwfTrace) -> array:
    """How long each job really runs here: its run time, cut at its requested time when it has one
    (a job is ended at its run limit, as on a real cluster)."""
    return array("q", (min(r, q) if q > 0 else r for r, q in zip(trace.run, trace.req_time, strict=True)))


def job_specs(trace: SwfTrace, cluster: SimCluster, queues: list[str]) -> list[JobSpec]:
    """Every job's spec (for tests and tools; the loop builds them one timestamp at a time)."""
    make = _Specs(trace, cluster, queues)
    return [make(i) for i in range(len(trace))]


def too_large(trace: SwfTrace, cluster: SimCluster) -> list[int]:
    """Jobs that can never start on ``cluster``: more processors than it has slots, or (on a cluster
    with memory) more memory per task than its largest host. They would pend forever and swell the
    queue for the whole run, so they are reported and kept out, as Batsim rejects them."""
    slots = cluster.total_slots
    out = [i for i, p in enumerate(trace.procs) if p > slots]
    if cluster.has_mem:
        biggest = max(int(h.values.get("mem", 0)) for h in cluster.hosts)
        rejected = set(out)
        out += [i for i, kb in enumerate(trace.req_mem) if kb * 1024 > biggest and i not in rejected]
        out.sort()
    return out


def _open_writer(record: Any, core: SchedulerCore, snapshot_interval: int) -> Any:
    try:
        from xce.replay.writer import ReplayWriter
    except ImportError as exc:
        raise SimulationError(f"--record needs xce.replay.writer.ReplayWriter, which is not installed here ({exc})") from None
    target = str(record) if isinstance(record, Path) else record
    return ReplayWriter(target, core, snapshot_interval=snapshot_interval)


def simulate(trace: SwfTrace, cluster: SimCluster, *, seed: int = 0, queues_from_trace: bool = False,
             record: Any = None, snapshot_interval: int = 10000,
             progress: Callable[[int, int], None] | None = None) -> SimResult:
    """Run ``trace`` on ``cluster`` to the end; ``progress(jobs_started, jobs_total)`` now and then."""
    n = len(trace)
    queues = job_queues(trace, cluster, queues_from_trace)
    if queues_from_trace or trace.names is not None:
        cluster = cluster.with_queues(sorted(set(queues)))
    elif cluster.default_queue not in {q.name for q in cluster.config.queues}:
        cluster = cluster.with_queues([cluster.default_queue])
    make_spec = _Specs(trace, cluster, queues)
    submit, procs, jobids = trace.submit, trace.procs, trace.jobid
    run = runs_for(trace)
    ticks_on = cluster.has_mem
    used_mem = trace.used_mem
    rejected = too_large(trace, cluster)
    skip = bytearray(n)
    for i in rejected:
        skip[i] = 1
    #: Job id -> trace index for jobs in the system (pending, running, suspended) only.
    index: dict[int, int] = {}
    start = array("q", [-1]) * n
    end = array("q", [-1]) * n
    placement = Placements([h.name for h in cluster.hosts], n)
    preemptions = array("i", [0]) * n
    finish_at = array("q", [0]) * n
    gen = array("i", [0]) * n
    result = SimResult(trace=trace, cluster=cluster, queue_of=queues, start=start, end=end,
                       placement=placement, preemptions=preemptions, too_large=rejected)
    s_t, s_busy, s_pend = result.series_t, result.series_busy, result.series_pending

    decisions: list[Any] = []
    writer = None

    def recording_sink(d: Any) -> None:
        writer.decision(d)
        decisions.append(d)

    core = SchedulerCore(decisions.append if record is None else recording_sink, seed=seed)
    freeze = core.clock.freeze_at
    push_core = core.push_event
    if record is not None:
        writer = _open_writer(record, core, snapshot_interval)
        wevent = writer.event

        def push(e: ev.Event) -> None:
            wevent(e)
            push_core(e)
    else:
        push = push_core

    wall0 = time.perf_counter()
    nevents = 0
    t0 = next((submit[i] for i in range(n) if not skip[i]), submit[0] if n else 0)
    freeze(t0 * NS)
    config = cluster.config
    if not config.projects:
        from dataclasses import replace

        config = replace(config, projects=(ProjectSpec("default"),))
    if trace.names is not None:  # projects the workload names but the configuration lacks
        from dataclasses import replace

        have = {pr.name for pr in config.projects}
        extra = tuple(ProjectSpec(name) for name in sorted(set(trace.names.project) - have))
        if extra:
            config = replace(config, projects=config.projects + extra)
    push(ev.ConfigPush(ts=t0 * NS, config=config))
    push(ev.WorkersPush(ts=t0 * NS, hosts=tuple(cluster.hosts)))
    nevents += 2
    # A wide job's placement is packed from the host indexes the core's ledger recorded (its hosts
    # sorted by name), not from thousands of names: ``to_sim`` maps them to this cluster's order.
    # The hosts are pushed only here, so the core's indexes never move afterwards.
    to_sim = np.fromiter(map(placement.index.__getitem__, core.cluster.names), dtype=np.int64,
                         count=len(core.cluster.names))
    core_jobs, host_indexes = core.jobs, core.ledger.host_indexes

    heap: list[tuple[int, int, int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop
    p = 0
    busy = 0
    pending = 0
    suspended = 0
    started = 0
    place, place_at = placement.set, placement.set_indexes
    rounds = 0
    ndecisions = 0
    next_progress = 0
    INF = 1 << 62
    JSC, JobsPush, JobRusage, BeginRound = ev.JobStateChange, ev.JobsPush, ev.JobRusage, ev.BeginRound
    try:
        while True:
            t = submit[p] if p < n else INF
            if heap and heap[0][0] < t:
                t = heap[0][0]
            if t == INF:
                break
            ts = t * NS
            freeze(ts)
            while heap and heap[0][0] == t:
                _, i, g = heappop(heap)
                if g != gen[i]:
                    continue  # superseded by a suspension
                end[i] = t
                busy -= procs[i]
                jid = jobids[i]
                del index[jid]
                push(JSC(ts=ts, jobid=jid, state=DONE))
                nevents += 1
            if p < n and submit[p] == t:
                batch = []
                while p < n and submit[p] == t:
                    if not skip[p]:
                        index[jobids[p]] = p
                        batch.append(make_spec(p))
                    p += 1
                if batch:
                    push(JobsPush(ts=ts, jobs=tuple(batch)))
                    nevents += 1
                    pending += len(batch)
            # A round with nothing pending and nothing suspended can decide nothing: skip it.
            if pending or suspended:
                for _ in range(MAX_ROUNDS_PER_TS):
                    decisions.clear()
                    push(BeginRound(ts=ts))
                    nevents += 1
                    rounds += 1
                    ndecisions += len(decisions)
                    after: list[ev.Event] = []
                    again = False
                    for d in decisions:
                        kind = type(d)
                        if kind is Dispatch:
                            i = index[d.jobid]
                            if start[i] < 0:
                                start[i] = t
                                started += 1
                            pending -= 1
                            at = host_indexes(core_jobs[d.jobid]) if len(d.placement) >= WIDE else None
                            if at is None:
                                place(i, d.placement)
                            else:
                                place_at(i, to_sim[at[0]], at[1])
                            busy += procs[i]
                            finish_at[i] = f = t + run[i]
                            heappush(heap, (f, i, gen[i]))
                            if ticks_on and used_mem[i] > 0:
                                after.append(JobRusage(ts=ts, jobid=d.jobid,
                                                       usage={"memory_rss": used_mem[i] * 1024 * procs[i]}))
                        elif kind is Preempt:
                            for vid in d.victim_jobids:
                                v = index[vid]
                                gen[v] += 1
                                finish_at[v] -= t  # now the run time left
                                preemptions[v] += 1
                                busy -= procs[v]
                                after.append(JSC(ts=ts, jobid=vid, state=SSUSP, reason="preempted"))
                            suspended += len(d.victim_jobids)
                            again = True
                        elif kind is Resume:
                            v = index[d.jobid]
                            suspended -= 1
                            busy += procs[v]
                            finish_at[v] = f = t + finish_at[v]
                            heappush(heap, (f, v, gen[v]))
                            after.append(JSC(ts=ts, jobid=d.jobid, state=RUN, reason="resumed"))
                    for e in after:
                        push(e)
                    nevents += len(after)
                    if not again:
                        break
                else:
                    raise SimulationError(f"preemption did not settle after {MAX_ROUNDS_PER_TS} rounds at t={t}s")
            s_t.append(t)
            s_busy.append(busy)
            s_pend.append(pending)
            if progress is not None and started >= next_progress:
                progress(started, n)
                next_progress = started + max(1, n // 200)
    finally:
        if writer is not None:
            writer.close()
    if progress is not None:
        progress(started, n)
    result.wall_s = time.perf_counter() - wall0
    result.events = nevents
    result.rounds = rounds
    result.decisions = ndecisions
    return result
