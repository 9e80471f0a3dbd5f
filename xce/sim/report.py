"""What a simulation says: per-job CSV (XCE's columns or Batsim's), a summary JSON, and the memory drift table.

The metrics themselves (wait, bounded slowdown, utilization) are defined once, in
:mod:`xce.sim.metrics`; this module only shapes them into files and text.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any, Callable, Iterable

from xce.formats import size
from xce.sim import metrics
from xce.sim.engine import SimResult, runs_for
from xce.sim.metrics import TAU

#: Per-job CSV layouts: ``xce`` (this project's columns) and ``batsim`` (Batsim's ``_jobs.csv``, read
#: by evalys and other Batsim tools).
CSV_LAYOUTS = ("xce", "batsim")
BATSIM_COLUMNS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
                  "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
                  "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata")
#: How many jobs too large for the cluster the summary names.
TOO_LARGE_SAMPLE = 10


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    k = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return float(sorted_values[k - 1])


def median(sorted_values: list[float]) -> float:
    n = len(sorted_values)
    if not n:
        return 0.0
    mid = n // 2
    return float(sorted_values[mid]) if n % 2 else (sorted_values[mid - 1] + sorted_values[mid]) / 2.0


def placement_text(placement: Iterable[tuple[str, int]]) -> str:
    return " ".join(f"{h}:{t}" for h, t in placement)


def write_jobs_csv(result: SimResult, path: str | Path, layout: str = "xce", *, full_placement: bool = False) -> None:
    """One row per job in trace order (``xce``), or Batsim's ``_jobs.csv`` layout (``batsim``).

    The ``hosts`` column is a compact host list (:mod:`xce.sim.hostlist`) unless ``full_placement``
    asks for every host written out; :func:`xce.sim.hostlist.expand` reads both.
    """
    if layout == "batsim":
        write_batsim_csv(result, path)
        return
    if layout != "xce":
        raise ValueError(f"unknown CSV layout {layout!r} (expected one of {', '.join(CSV_LAYOUTS)})")
    tr = result.trace
    placement = result.placement
    field = _CsvField()
    if full_placement:
        def hosts(i: int) -> str:
            return field(placement.text(i))
    else:
        from xce.sim.hostlist import CompactWriter

        compact, packed, unpack = CompactWriter(placement.names).text, placement.packed, placement.runs
        # Narrow jobs land on the same few hosts again and again: equal packed bytes, equal text,
        # looked up before the runs are even unpacked.
        written: dict[bytes, str] = {}

        def hosts(i: int) -> str:
            blob = packed(i)
            if not blob:
                return ""
            text = written.get(blob)
            if text is None:
                text = written[blob] = field(compact(unpack(i)))
            return text
    if tr.names is not None:
        users = _each(field, tr.names.user)
    else:
        names = {u: field(f"u{u}" if u >= 0 else "unknown") for u in set(tr.user)}
        users = [names[u] for u in tr.user]
    queues = _each(field, result.queue_of)

    start, end, submit, jobid, procs, req_time = result.start, result.end, tr.submit, tr.jobid, tr.procs, tr.req_time
    runs, preemptions, bounded_slowdown = runs_for(tr), result.preemptions, metrics.bounded_slowdown
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerow(["jobid", "user", "queue", "submit", "start", "end", "wait", "run", "requested", "bsld",
                                 "tasks", "hosts", "preemptions"])
        # Rows are formatted here rather than by csv.writer, at half the cost; the text fields come
        # quoted as it would quote them (_CsvField), the others are numbers.
        write = fh.write
        for i in range(len(tr)):
            s, sub, r, req = start[i], submit[i], runs[i], req_time[i]
            requested = req if req > 0 else ""
            if s < 0:
                write(f"{jobid[i]},{users[i]},{queues[i]},{sub},,,,{r},{requested},,{procs[i]},{hosts(i)},"
                      f"{preemptions[i]}\r\n")
                continue
            e = end[i]
            if e < 0:
                write(f"{jobid[i]},{users[i]},{queues[i]},{sub},{s},,{s - sub},{r},{requested},,{procs[i]},"
                      f"{hosts(i)},{preemptions[i]}\r\n")
                continue
            write(f"{jobid[i]},{users[i]},{queues[i]},{sub},{s},{e},{s - sub},{r},{requested},"
                  f"{bounded_slowdown(e - sub - r, r):.4g},{procs[i]},{hosts(i)},{preemptions[i]}\r\n")


def _each(fn: Callable[[str], str], values: list[str]) -> list[str]:
    """``[fn(v) for v in values]``, calling ``fn`` once per distinct value (a few queues, 18,000 jobs)."""
    done = {v: fn(v) for v in set(values)}
    return [done[v] for v in values]


class _CsvField:
    """A text as ``csv.writer`` writes it as one field of a row (quoted only where it must be),
    worked out by csv itself once per distinct text."""

    __slots__ = ("_done", "_buf", "_row")

    def __init__(self) -> None:
        self._done: dict[str, str] = {}
        self._buf = io.StringIO()
        self._row = csv.writer(self._buf).writerow

    def __call__(self, text: str) -> str:
        out = self._done.get(text)
        if out is None:
            buf = self._buf
            buf.seek(0)
            buf.truncate()
            self._row([text, ""])  # two fields: an empty text alone on a row would be quoted
            out = self._done[text] = buf.getvalue()[:-3]  # less the ",\r\n" of the empty second field
        return out


def write_batsim_csv(result: SimResult, path: str | Path) -> None:
    """Batsim's ``_jobs.csv``: one row per job that ran, in trace order.

    ``allocated_resources`` is an interval set of resource ids (``0-3 8``), one resource per slot
    (:func:`xce.sim.resources.resource_intervals`); jobs that never started are not written, as
    Batsim writes none for jobs it rejects (they are in the summary). ``requested_time`` is SWF's
    field 9 (-1 when the trace does not know it).
    """
    from xce.sim.resources import interval_text, resource_intervals

    tr = result.trace
    intervals = resource_intervals(result)
    workload = Path(tr.source).name if tr.source else "trace"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(BATSIM_COLUMNS)
        for i in range(len(tr)):
            s, e = result.start[i], result.end[i]
            if s < 0 or e < 0:
                continue
            sub = tr.submit[i]
            execution = e - s
            turnaround = e - sub
            stretch = turnaround / execution if execution > 0 else (1.0 if turnaround == 0 else math.inf)
            w.writerow([tr.jobid[i], workload, "swf", sub, tr.procs[i], tr.req_time[i], 1, "COMPLETED_SUCCESSFULLY",
                        s, execution, e, s - sub, turnaround, f"{stretch:.6f}", interval_text(intervals(i)), 0, ""])


def summary(result: SimResult, *, drift: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    tr = result.trace
    n = len(tr)
    m = metrics.job_metrics(result)
    started = sum(1 for s in result.start if s >= 0)
    waits = sorted(m.wait.tolist())
    rejected = set(result.too_large)
    first = next((tr.submit[i] for i in range(n) if i not in rejected), 0)  # submit order: the earliest
    last = int(m.end.max()) if len(m) else first
    makespan = last - first
    slots = result.cluster.total_slots
    busy = int((m.procs * m.run).sum()) if len(m) else 0
    never = result.never_started
    big = result.too_large
    out: dict[str, Any] = {
        "trace": tr.source,
        "job_lines": tr.job_lines,
        "jobs_simulated": n,
        "jobs_started": started,
        "jobs_finished": len(m),
        "jobs_never_started": len(never),
        "never_started_jobids": [tr.jobid[i] for i in never[:50]],
        "jobs_too_large": len(big),
        "too_large_sample": [{"jobid": tr.jobid[i], "procs": tr.procs[i]} for i in big[:TOO_LARGE_SAMPLE]],
        "skipped": dict(sorted(tr.skipped.items())),
        "skipped_total": sum(tr.skipped.values()),
        "malformed": tr.malformed,
        "skipped_examples": [{"line": ln, "reason": r} for ln, r in tr.skipped_examples],
        "hosts": len(result.cluster.hosts),
        "slots": slots,
        "picker": result.cluster.config.job_pick_plugin,
        "wait_mean_s": sum(waits) / len(waits) if waits else 0.0,
        "wait_median_s": median(waits),
        "wait_p95_s": percentile(waits, 95),
        "wait_max_s": waits[-1] if waits else 0,
        "bounded_slowdown_mean": float(m.bsld.mean()) if len(m) else 0.0,
        "bounded_slowdown_p95": metrics.linear_percentile(m.bsld, 95) if len(m) else 0.0,
        "bounded_slowdown_tau_s": TAU,
        "utilization": busy / (slots * makespan) if slots and makespan > 0 else 0.0,
        "makespan_s": makespan,
        "peak_queue_length": max(result.series_pending, default=0),
        "preemptions": sum(result.preemptions),
        "rounds": result.rounds,
        "events": result.events,
        "decisions": result.decisions,
        "sim_wall_s": round(result.wall_s, 4),
        "events_per_s": round(result.events / result.wall_s, 1) if result.wall_s > 0 else 0.0,
    }
    if tr.unix_start is not None:
        out["unix_start_time"] = tr.unix_start
    if drift is not None:
        out["drift"] = drift
    if extra:
        out.update(extra)
    return out


# -- drift: declared versus measured ------------------------------------------------------------


def drift_rows(records: Iterable[dict[str, Any]], min_samples: int, low: float = 0.5,
               high: float = 1.5) -> list[dict[str, Any]]:
    """Per (job type, resource): how what jobs declare compares with what they use.

    ``records`` are dicts with ``job_type``, ``resource``, ``declared`` and ``measured`` (same unit,
    per task; ``declared`` 0 = nothing declared). The verdicts are the controller's
    (:func:`xce.accounting.drift.drift_report`), so a trace and a live cluster are judged alike;
    this only shapes them into the simulator's table. A group with fewer than ``min_samples`` runs
    gets no verdict, only how many it has and needs.

    The shared report works in whole units and truncates a median; an even number of runs can have
    a median halfway between two values, so every figure is doubled going in and halved coming
    out, which keeps that half exact (the ratio is unchanged by the scaling).
    """
    # Imported here: most traces record no memory (see drift_report), and statistics is not free.
    from xce.accounting.drift import (
        FAR_ABOVE,
        FAR_BELOW,
        OK,
        UNDECLARED,
        Thresholds,
        UsageRecord,
        drift_report as shared_drift_report,
    )

    # The shared verdicts in the words the simulator's table has always used.
    sim_verdict = {FAR_BELOW: "reserves what it never uses", FAR_ABOVE: "oversubscribes",
                   UNDECLARED: "never declared", OK: "ok"}
    recs = [UsageRecord(str(r["job_type"]), str(r["resource"]), int(2 * float(r["declared"])),
                        int(2 * float(r["measured"]))) for r in records]
    rep = shared_drift_report(recs, min_samples=min_samples, thresholds=Thresholds(low=low, high=high))
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for i in rep.insufficient:
        by_key[(i.job_type, i.resource)] = {"job_type": i.job_type, "resource": i.resource, "runs": i.runs,
                                            "verdict": "too few runs", "needed": i.needed,
                                            "note": f"{i.runs} run(s), {i.needed} needed for a verdict"}
    for d in rep.rows:
        row: dict[str, Any] = {"job_type": d.job_type, "resource": d.resource, "runs": d.runs,
                               "declared": d.declared / 2, "measured_median": d.measured_median / 2,
                               "measured_p95": d.measured_p95 / 2, "measured_max": d.measured_max / 2,
                               "ratio": d.ratio, "verdict": sim_verdict[d.verdict]}
        if d.verdict == FAR_BELOW:
            row["wasted_per_task"] = d.wasted_per_placement / 2
        by_key[(d.job_type, d.resource)] = row
    # Trace job types are numbers: shorter first reads 2, 10, 100 in numeric order.
    return [by_key[k] for k in sorted(by_key, key=lambda k: (len(k[0]), k[0], k[1]))]


def trace_memory_records(trace: Any) -> list[dict[str, Any]]:
    """Memory per task in bytes from SWF f10 (declared; unknown = 0) and f7 (measured; unknown = no record)."""
    out = []
    for i in range(len(trace)):
        used = trace.used_mem[i]
        if used < 0:
            continue
        exe = trace.executable[i]
        req = trace.req_mem[i]
        out.append({"job_type": str(exe) if exe >= 0 else "all", "resource": "mem",
                    "declared": max(req, 0) * 1024, "measured": used * 1024})
    return out


def drift_report(trace, min_samples: int = 20) -> dict[str, Any]:
    records = trace_memory_records(trace)
    rows = drift_rows(records, min_samples) if records else []
    note = "" if records else "the trace reports no used memory (SWF field 7), so there is nothing to compare"
    return {"resource": "mem", "unit": "bytes per task", "min_samples": min_samples, "records": len(records),
            "rows": rows, "note": note}


def drift_text(drift: dict[str, Any]) -> str:
    lines = [f"Memory drift: declared (SWF f10) vs measured (f7), per task, by job type (f14); "
             f"{drift['records']} run(s) with measurements"]
    if drift.get("note"):
        lines.append(f"  {drift['note']}")
    head = f"  {'type':>8} {'runs':>5} {'declared':>9} {'med':>8} {'p95':>8} {'max':>8} {'ratio':>6}  verdict"
    if drift["rows"]:
        lines.append(head)
    for r in drift["rows"]:
        if r["verdict"] == "too few runs":
            lines.append(f"  {r['job_type']:>8} {r['runs']:>5} {'':>9} {'':>8} {'':>8} {'':>8} {'':>6}  ({r['note']})")
            continue
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        verdict = r["verdict"]
        if "wasted_per_task" in r:
            verdict += f" (wastes {size(r['wasted_per_task'])} per task placed)"
        lines.append(f"  {r['job_type']:>8} {r['runs']:>5} {size(r['declared']):>9} {size(r['measured_median']):>8} "
                     f"{size(r['measured_p95']):>8} {size(r['measured_max']):>8} {ratio:>6}  {verdict}")
    return "\n".join(lines)


def summary_text(s: dict[str, Any]) -> str:
    skipped = ", ".join(f"{k}: {v}" for k, v in s["skipped"].items()) or "none"
    lines = [
        f"Trace {s['trace']}: {s['job_lines']} job line(s), {s['jobs_simulated']} simulated, "
        f"{s['skipped_total']} skipped ({skipped})",
        f"Cluster: {s['hosts']} host(s), {s['slots']} slot(s), picker {s['picker']}",
    ]
    if s.get("jobs_too_large"):
        sample = ", ".join(f"job {j['jobid']} ({j['procs']} processors)" for j in s["too_large_sample"][:3])
        lines.append(f"Too large for the cluster: {s['jobs_too_large']} job(s) not simulated, e.g. {sample}")
    lines += [
        f"Started {s['jobs_started']}, never started {s['jobs_never_started']}"
        + (f" (jobs {', '.join(map(str, s['never_started_jobids'][:10]))}"
           f"{'...' if s['jobs_never_started'] > 10 else ''})" if s['jobs_never_started'] else ""),
        f"Wait: mean {s['wait_mean_s']:.1f} s, median {s['wait_median_s']:.1f} s, p95 {s['wait_p95_s']:.1f} s; "
        f"bounded slowdown (tau {s['bounded_slowdown_tau_s']} s) mean {s['bounded_slowdown_mean']:.2f}, "
        f"p95 {s.get('bounded_slowdown_p95', 0.0):.2f}",
        f"Utilization {s['utilization'] * 100:.1f}%, makespan {s['makespan_s']} s, "
        f"peak queue {s['peak_queue_length']} job(s), preemptions {s['preemptions']}",
        f"Simulated in {s['sim_wall_s']:.2f} s: {s['events']} events ({s['events_per_s']:.0f}/s), "
        f"{s['rounds']} rounds",
    ]
    return "\n".join(lines)


def write_summary(s: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(s, indent=2, sort_keys=False) + "\n", encoding="utf-8")
