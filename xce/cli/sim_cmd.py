"""``xce sim run``: what-if answers from a real workload trace, through the production core.

Heavy modules (numpy via the core, matplotlib) are imported inside the command so that other
``xce`` commands, which load this module only for ``--help``, stay fast.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from xce.cli.spec import Arg, Command, Group, Opt, path, standalone

#: The command a one-line error names (``compare`` shares the helpers of ``run``).
_prog = ["xce sim run"]


def _fail(message: str, code: int = 2) -> None:
    print(f"{_prog[0]}: {message}", file=sys.stderr)
    raise SystemExit(code)


@contextmanager
def _loading_the_simulator() -> Iterator[None]:
    """Around the imports of ``run`` and ``compare``. In a process that has not loaded numpy yet (a
    command line), two costs that have nothing to do with simulating are left out:

    * OpenBLAS's thread pool, started while numpy loads, costs more CPU than simulating a small
      trace, and the simulator multiplies no matrices: OPENBLAS_NUM_THREADS is 1 while numpy loads
      (the library reads it only then), unless the user set it;
    * the cyclic collector walking everything the imports made, during them and in every later
      full collection, the one at exit included: it is paused while they run, and what they made,
      which lives as long as the process, is then frozen out of its way (``gc.freeze``).
    """
    if "numpy" in sys.modules:
        yield
        return
    blas = "OPENBLAS_NUM_THREADS" not in os.environ
    collecting = gc.isenabled()
    gc.disable()
    try:
        if blas:
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
        try:
            import numpy  # noqa: F401
        finally:
            if blas:
                del os.environ["OPENBLAS_NUM_THREADS"]
        yield
    finally:
        if collecting:
            gc.enable()
    gc.freeze()


def _progress_bar():
    """A rich progress bar with ETA, or None when stdout is not a terminal (logs, pipes, tests)."""
    if not sys.stdout.isatty():
        return None, None
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs started"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=True)
    task = bar.add_task("sim", total=1)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=max(total, 1))

    return bar, update


def parse_window(text: str) -> tuple[int, int]:
    """``START:END`` in trace time (seconds after the first submission; ``s``, ``m``, ``h``, ``d`` suffixes)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}

    def one(part: str) -> int:
        part = part.strip().lower()
        scale = units.get(part[-1:], None)
        number = part[:-1] if scale else part
        try:
            value = float(number)
        except ValueError:
            raise ValueError(f"not a time: {part!r} (e.g. 36h or 1.5d)") from None
        if not 0 <= value < 1e10:
            raise ValueError(f"out of range: {part!r}")
        return int(value * (scale or 1))

    first, sep, second = text.partition(":")
    if not sep:
        raise ValueError(f"expected START:END (e.g. 30d:31d), got {text!r}")
    a, b = one(first), one(second)
    if b <= a:
        raise ValueError(f"the window ends before it starts: {text!r}")
    return a, b


def run(workload: Path, hosts: Optional[int], slots_per_host: Optional[int], mem_per_host: Optional[str],
        cluster: Optional[Path], picker: Optional[str], seed: int, record: Optional[Path], snapshot_interval: int,
        out: Optional[Path], json_out: bool, queues_from_trace: bool, plots: bool, report_file: Optional[Path],
        csv_layout: str, gantt_window: Optional[str], max_jobs: Optional[int], skip_malformed: bool,
        drift_min_samples: int, full_placement: bool = False) -> None:
    """Run a trace to completion on a simulated cluster and report waits, slowdown and utilization."""
    with _loading_the_simulator():
        from xce.sim import report
        from xce.sim.engine import SimulationError, simulate
        from xce.sim.swf import SwfError
        from xce.sim.workload import read_workload

    if cluster is not None and (hosts is not None or slots_per_host is not None or mem_per_host is not None):
        _fail("give either --cluster FILE or --hosts/--slots-per-host/--mem-per-host, not both")
    if plots and out is None:
        _fail("--plots draws into a directory: give --out DIR too (or --report FILE.html for one page)")
    if csv_layout not in report.CSV_LAYOUTS:
        _fail(f"--csv-layout: expected one of {', '.join(report.CSV_LAYOUTS)}, got {csv_layout!r}")
    window = None
    if gantt_window is not None:
        try:
            window = parse_window(gantt_window)
        except ValueError as exc:
            _fail(f"--gantt-window: {exc}")
    try:
        trace = read_workload(workload, max_jobs=max_jobs, skip_malformed=skip_malformed)
    except SwfError as exc:
        _fail(str(exc), 1)
    except OSError as exc:
        _fail(f"cannot read the workload {workload}: {exc.strerror or exc}", 1)
    if trace.malformed:
        line, detail = trace.first_malformed or (0, "")
        print(f"xce sim run: warning: {trace.malformed} malformed line(s) skipped, the first at "
                   f"{workload}:{line}: {detail}", file=sys.stderr)
    sim_cluster = _cluster(trace, workload, cluster, hosts, slots_per_host, mem_per_host)
    for key, problem in sorted(trace.header_problems.items()):
        if key not in ("MaxNodes", "MaxProcs") or hosts is not None or cluster is not None:
            print(f"xce sim run: warning: {workload}: {problem} (ignored)", file=sys.stderr)
    sim_cluster = sim_cluster.with_picker(picker)
    if picker:
        from xce.core.pickers import registry

        # Installed plugins are looked for only when they can matter: reading the package metadata
        # costs more than simulating a small trace, and no plugin may take a builtin's name.
        if picker not in registry.available() or cluster is not None:
            from xce.plugins import load_entry_points

            for problem in load_entry_points():
                print(f"xce sim run: warning: {problem}", file=sys.stderr)

        if picker not in registry.available():
            _fail(f"unknown picker {picker!r} (registered: {', '.join(sorted(registry.available()))})")

    bar, update = (None, None) if json_out else _progress_bar()
    try:
        if bar is not None:
            bar.start()
        result = simulate(trace, sim_cluster, seed=seed, queues_from_trace=queues_from_trace, record=record,
                          snapshot_interval=snapshot_interval, progress=update)
    except SimulationError as exc:
        _fail(str(exc), 1)
    finally:
        if bar is not None:
            bar.stop()
    if len(result.too_large) == len(trace):
        big = max(trace.procs)
        _fail(f"no job of {workload} fits the simulated cluster ({sim_cluster.total_slots} slot(s); the largest "
              f"job needs {big} processors): give --hosts/--slots-per-host or --cluster for a bigger one", 1)

    drift = report.drift_report(trace, drift_min_samples)
    summary = report.summary(result, drift=drift, extra={"seed": seed, "record": str(record) if record else None})
    written: list[str] = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        report.write_jobs_csv(result, out / "jobs.csv", csv_layout, full_placement=full_placement)
        (out / "drift.txt").write_text(report.drift_text(drift) + "\n", encoding="utf-8")
        written += [str(out / "jobs.csv"), str(out / "summary.json"), str(out / "drift.txt")]
        if plots:
            from xce.sim.plots import write_plots

            summary["plots"] = [str(p) for p in write_plots(result, out, gantt_window=window)]
            written.append(f"{len(summary['plots'])} plot files")
        report.write_summary(summary, out / "summary.json")
    if report_file is not None:
        from xce.sim.html_report import write_run_report

        write_run_report(report_file, result, summary, gantt_window=window)
        written.append(str(report_file))
    if json_out:
        print(json.dumps(summary, indent=2))
    else:
        print(report.summary_text(summary))
        print(report.drift_text(drift))
        if written:
            print("Wrote " + ", ".join(written))


def _cluster(trace, workload: Path, cluster: Optional[Path], hosts: Optional[int], slots_per_host: Optional[int],
             mem_per_host: Optional[str]):
    """The simulated cluster: a cluster file, the options, or the machine the trace's header describes."""
    from xce.sim.cluster_file import load_cluster_file, parse_size, uniform_cluster

    if cluster is not None:
        from xce.config.loader import ConfigError  # pydantic: only when there is a file to validate

        try:
            return load_cluster_file(cluster)
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            raise SystemExit(1) from None
    if hosts is None:
        machine = trace.machine()
        if machine is None:
            bad = [trace.header_problems[k] for k in ("MaxNodes", "MaxProcs") if k in trace.header_problems]
            why = f"its header is wrong ({bad[0]})" if bad else "it has no MaxNodes/MaxProcs header"
            _fail(f"{workload}: {why}; give --hosts N [--slots-per-host S] or --cluster FILE", 1)
        n_hosts, slots = machine  # type: ignore[misc]
        if slots_per_host is not None:
            size = n_hosts * slots  # the machine's processors, dealt out S per host
            n_hosts, slots = -(-size // slots_per_host), slots_per_host
    else:
        n_hosts, slots = hosts, slots_per_host or 1
    try:
        mem = parse_size(mem_per_host) if mem_per_host is not None else None
    except ValueError as exc:
        _fail(f"--mem-per-host: {exc}")
    return uniform_cluster(n_hosts, slots, mem)


RUN = Command(
    "run", "Run a trace to completion on a simulated cluster and report waits, slowdown and utilization.",
    [
        Opt("workload", ("--workload",), path, required=True, metavar="FILE",
            help="Trace in the Standard Workload Format (.swf, or gzip/bzip2/xz compressed), or an XCE JSON-lines "
                 "workload (`xce workload export --format xce`)."),
        Opt("hosts", ("--hosts",), int, None, min=1, metavar="N",
            help="Number of identical hosts (default: the trace header's MaxNodes)."),
        Opt("slots_per_host", ("--slots-per-host",), int, None, min=1, metavar="N", help="Slots on each host."),
        Opt("mem_per_host", ("--mem-per-host",), metavar="SIZE",
            help="Memory of each host (e.g. 32G); enables the trace's memory requests."),
        Opt("cluster", ("--cluster",), path, metavar="FILE",
            help="Cluster file: xce.toml queues plus [[sim.hosts]] (see examples/sim/cluster.toml)."),
        Opt("picker", ("--picker",), help="Job picker plugin (default: the configuration's)."),
        Opt("seed", ("--seed",), int, 0, show_default=False, help="Seed of the core's random generator."),
        Opt("record", ("--record",), path, metavar="FILE",
            help="Write a replay file that `xce scheduler --sim FILE --sim-verify` checks."),
        Opt("snapshot_interval", ("--snapshot-interval",), int, 10000, min=0, metavar="N",
            help="Events between snapshots in --record."),
        Opt("out", ("--out",), path, metavar="DIR", complete="dir",
            help="Directory for jobs.csv, summary.json, drift.txt (and --plots)."),
        Opt("json_out", ("--json",), bool, False, help="Print the summary as JSON on stdout."),
        Opt("queues_from_trace", ("--queues-from-trace",), bool, False,
            help="Put each job in queue q<N> for its SWF queue number N (default: one queue)."),
        Opt("plots", ("--plots",), bool, False, negate=("--no-plots",), show_default=False,
            help="Draw the plots (PNG and SVG) into --out."),
        Opt("report_file", ("--report",), path, metavar="FILE",
            help="Write one self-contained HTML page: summary, plots and the per-picker table."),
        Opt("csv_layout", ("--csv-layout",), default="xce", metavar="LAYOUT",
            help="Columns of jobs.csv: xce, or batsim (Batsim's _jobs.csv, read by evalys)."),
        Opt("gantt_window", ("--gantt-window",), metavar="START:END",
            help="Time window of the Gantt chart, START:END after the first submission (e.g. 30d:31d; default: "
                 "one day around the longest queue)."),
        Opt("max_jobs", ("--max-jobs",), int, None, min=1, metavar="N", help="Simulate only the first N jobs."),
        Opt("skip_malformed", ("--skip-malformed",), bool, False,
            help="Simulate the readable jobs even when many lines are malformed (counted)."),
        Opt("drift_min_samples", ("--drift-min-samples",), int, 20, min=1, metavar="N",
            help="Fewest runs of a job type for a drift verdict."),
        Opt("full_placement", ("--full-placement",), bool, False,
            help="Write every host of every job in jobs.csv (h001:1 h002:1 ...) instead of host ranges "
                 "(h[001-002]:1)."),
    ],
    run,
    examples=("xce sim run --workload NASA-iPSC-1993-3.1-cln.swf --report nasa.html",
              "xce sim run --workload CEA-Curie-2011-2.4-cln.swf.gz --out curie --plots --csv-layout batsim",
              "xce sim run --workload lublin_256.swf --hosts 128 --slots-per-host 2 --json",
              "xce sim run --workload trace.swf --cluster examples/sim/cluster.toml --queues-from-trace",
              "xce sim run --workload trace.swf --record run.jsonl && xce scheduler --sim run.jsonl --sim-verify"),
)

#: Suffixes ``--plot FILE`` can write.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _ratio_text(row: dict, key: str) -> str:
    vs = row.get("vs_easy_backfill")
    if not vs or vs.get(key) is None:
        return "-"
    return f"{vs[key]:.2f}x"


def compare(trace_path: Path, pickers: Optional[str], hosts: Optional[int], slots_per_host: Optional[int],
            mem_per_host: Optional[str], cluster: Optional[Path], seed: int, queues_from_trace: bool,
            out: Optional[Path], plot: Optional[Path], report_file: Optional[Path], json_out: bool,
            max_jobs: Optional[int], skip_malformed: bool) -> None:
    """Run one trace under several pickers; one table of their figures (and the comparison plots)."""
    with _loading_the_simulator():
        from xce.cli.output import table
        from xce.core.pickers import registry
        from xce.plugins import load_entry_points
        from xce.sim import compare as cmp
        from xce.sim.engine import SimulationError
        from xce.sim.swf import SwfError
        from xce.sim.workload import read_workload

    _prog[0] = "xce sim compare"
    for problem in load_entry_points():
        print(f"xce sim compare: warning: {problem}", file=sys.stderr)
    if pickers is None:
        names = cmp.default_pickers()
    else:
        names = [p.strip() for p in pickers.split(",") if p.strip()]
        if not names:
            _fail("--pickers: expected a comma-separated list of picker names, e.g. builtin_fcfs,easy_backfill")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        _fail(f"--pickers: {', '.join(twice)} named twice")
    unknown = [n for n in names if n not in registry.available()]
    if unknown:
        _fail(f"--pickers: unknown picker {unknown[0]!r} (registered: {', '.join(registry.available())})")
    if cluster is not None and (hosts is not None or slots_per_host is not None or mem_per_host is not None):
        _fail("give either --cluster FILE or --hosts/--slots-per-host/--mem-per-host, not both")
    if plot is not None and plot.suffix.lower() not in PLOT_SUFFIXES:
        _fail(f"--plot: the file's suffix names its format, one of {', '.join(PLOT_SUFFIXES)}; got {str(plot)!r}")
    try:
        trace = read_workload(trace_path, max_jobs=max_jobs, skip_malformed=skip_malformed)
    except SwfError as exc:
        _fail(str(exc), 1)
    except OSError as exc:
        _fail(f"cannot read the workload {trace_path}: {exc.strerror or exc}", 1)
    if trace.malformed:
        line, detail = trace.first_malformed or (0, "")
        print(f"xce sim compare: warning: {trace.malformed} malformed line(s) skipped, the first at "
              f"{trace_path}:{line}: {detail}", file=sys.stderr)
    base = _cluster(trace, trace_path, cluster, hosts, slots_per_host, mem_per_host)
    try:
        runs = cmp.run_all(trace, base, names, seed=seed, queues_from_trace=queues_from_trace)
    except SimulationError as exc:
        _fail(str(exc), 1)
    if runs and len(runs[0].result.too_large) == len(trace):
        _fail(f"no job of {trace_path} fits the simulated cluster ({base.total_slots} slot(s); the largest job "
              f"needs {max(trace.procs)} processors): give --hosts/--slots-per-host or --cluster for a bigger one", 1)
    summaries = [r.summary for r in runs]
    pairs = [(r.picker, r.result) for r in runs]
    rows = cmp.rows(summaries)
    if json_out:
        print(json.dumps({"trace": str(trace_path), "baseline": cmp.BASELINE, "table": rows, "runs": summaries},
                         indent=2))
    else:
        table(["PICKER", "MEAN WAIT", "P95 WAIT", "MAX WAIT", "MEAN BSLD", "UTILIZATION", "JOBS",
               "WAIT/EASY", "MAXWAIT/EASY", "BSLD/EASY", "TIME"],
              [[r["picker"], f"{r['wait_mean_s']:.0f} s", f"{r['wait_p95_s']:.0f} s", f"{r['wait_max_s']} s",
                f"{r['bounded_slowdown_mean']:.2f}", f"{r['utilization'] * 100:.1f}%", str(r["jobs_finished"]),
                _ratio_text(r, "wait_mean_s"), _ratio_text(r, "wait_max_s"), _ratio_text(r, "bounded_slowdown_mean"),
                f"{r['sim_wall_s']:.1f} s"] for r in rows])
    written = []
    if plot is not None:
        from xce.sim.plots import write_wait_distribution

        plot.parent.mkdir(parents=True, exist_ok=True)
        written.append(str(write_wait_distribution(pairs, plot)))
    if out is not None:
        from xce.sim.plots import write_comparison_plots

        out.mkdir(parents=True, exist_ok=True)
        (out / "summaries.json").write_text(json.dumps(summaries, indent=2) + "\n", encoding="utf-8")
        files = write_comparison_plots(pairs, summaries, out)
        written += [str(out / "summaries.json"), f"{len(files)} plot files in {out}"]
    if report_file is not None:
        from xce.sim.html_report import write_compare_report

        write_compare_report(report_file, pairs, summaries)
        written.append(str(report_file))
    if written and not json_out:
        print("Wrote " + ", ".join(written))


COMPARE = Command(
    "compare", "Run one trace under several pickers and compare waits, slowdown and utilization in one table.",
    [
        Arg("trace_path", path, help="Trace in the Standard Workload Format (.swf, or compressed), or an XCE "
                                     "JSON-lines workload.", metavar="TRACE"),
        Opt("pickers", ("--pickers",), metavar="A,B,...",
            help="Comma-separated picker names, e.g. builtin_fcfs,strict_fcfs,easy_backfill (default: every "
                 "registered picker, easy_backfill first)."),
        Opt("hosts", ("--hosts",), int, None, min=1, metavar="N",
            help="Number of identical hosts (default: the trace header's MaxNodes)."),
        Opt("slots_per_host", ("--slots-per-host",), int, None, min=1, metavar="N", help="Slots on each host."),
        Opt("mem_per_host", ("--mem-per-host",), metavar="SIZE",
            help="Memory of each host (e.g. 32G); enables the trace's memory requests."),
        Opt("cluster", ("--cluster",), path, metavar="FILE", help="Cluster file (see xce sim run --cluster)."),
        Opt("seed", ("--seed",), int, 0, show_default=False, help="Seed of the core's random generator."),
        Opt("queues_from_trace", ("--queues-from-trace",), bool, False,
            help="Put each job in queue q<N> for its SWF queue number N (default: one queue)."),
        Opt("out", ("--out",), path, metavar="DIR", complete="dir",
            help="Directory for summaries.json and the comparison plots (PNG and SVG)."),
        Opt("plot", ("--plot",), path, metavar="FILE",
            help="Draw every picker's wait-time distribution (CDF) into FILE (.png, .svg or .pdf)."),
        Opt("report_file", ("--report",), path, metavar="FILE",
            help="One self-contained HTML page: the table and the comparison plots."),
        Opt("json_out", ("--json",), bool, False,
            help="Print the table (with the ratios to easy_backfill) and every run's summary as JSON."),
        Opt("max_jobs", ("--max-jobs",), int, None, min=1, metavar="N", help="Simulate only the first N jobs."),
        Opt("skip_malformed", ("--skip-malformed",), bool, False,
            help="Simulate the readable jobs even when many lines are malformed (counted)."),
    ],
    compare,
    examples=("xce sim compare lublin_256.swf",
              "xce sim compare --pickers builtin_fcfs,strict_fcfs,easy_backfill lublin_256.swf --plot waits.png",
              "xce sim compare --pickers strict_fcfs,easy_backfill NASA-iPSC-1993-3.1-cln.swf --out cmp --report cmp.html"),
)


SIM = Group("sim", "Simulate a workload trace (SWF) on a simulated cluster with the real scheduling core.", [RUN, COMPARE],
            examples=("xce sim run --workload trace.swf --report report.html",))

COMMAND_SPECS = [SIM]


if __name__ == "__main__":
    standalone(SIM, "python -m xce.cli.sim_cmd")
