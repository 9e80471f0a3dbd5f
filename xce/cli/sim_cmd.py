"""``xce sim run``: what-if answers from a real workload trace, through the production core.

Heavy modules (numpy via the core, matplotlib) are imported inside the command so that other
``xce`` commands, which load this module only for ``--help``, stay fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

sim_app = typer.Typer(
    name="sim",
    help="Simulate a workload trace (SWF) on a simulated cluster with the real scheduling core.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@sim_app.callback()
def _root() -> None:
    """Keeps typer in multi-command mode: ``sim run`` stays ``sim run``."""


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"xce sim run: {message}", err=True)
    raise typer.Exit(code)


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


@sim_app.command(
    "run",
    epilog=(
        "Examples:\n\n"
        "\b\n"
        "  $ xce sim run --workload NASA-iPSC-1993-3.1-cln.swf --out sim-out\n"
        "  $ xce sim run --workload lublin_256.swf --hosts 128 --slots-per-host 2 --json --no-plots\n"
        "  $ xce sim run --workload trace.swf --cluster examples/sim/cluster.toml --queues-from-trace\n"
        "  $ xce sim run --workload trace.swf --record run.jsonl && xce scheduler --sim run.jsonl --sim-verify"
    ),
)
def run(
    workload: Path = typer.Option(..., "--workload", help="Trace in the Standard Workload Format (.swf)."),
    hosts: Optional[int] = typer.Option(None, "--hosts", min=1, help="Number of identical hosts."),
    slots_per_host: Optional[int] = typer.Option(None, "--slots-per-host", min=1, help="Slots on each host."),
    mem_per_host: Optional[str] = typer.Option(
        None, "--mem-per-host", help="Memory of each host (e.g. 32G); enables the trace's memory requests."),
    cluster: Optional[Path] = typer.Option(
        None, "--cluster", help="Cluster file: xce.toml queues plus [[sim.hosts]] (see examples/sim/cluster.toml)."),
    picker: Optional[str] = typer.Option(None, "--picker", help="Job picker plugin (default: the configuration's)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the core's random generator."),
    record: Optional[Path] = typer.Option(
        None, "--record", help="Write a replay file that `xce scheduler --sim FILE --sim-verify` checks."),
    snapshot_interval: int = typer.Option(10000, "--snapshot-interval", min=0, help="Events between snapshots in --record."),
    out: Optional[Path] = typer.Option(None, "--out", help="Directory for jobs.csv, summary.json and the plots."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    queues_from_trace: bool = typer.Option(
        False, "--queues-from-trace", help="Put each job in queue q<N> for its SWF queue number N (default: one queue)."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Do not draw PNG plots into --out."),
    max_jobs: Optional[int] = typer.Option(None, "--max-jobs", min=1, help="Simulate only the first N jobs."),
    drift_min_samples: int = typer.Option(
        20, "--drift-min-samples", min=1, help="Fewest runs of a job type for a drift verdict."),
) -> None:
    """Run a trace to completion on a simulated cluster and report waits, slowdown and utilization."""
    from xce.config.loader import ConfigError
    from xce.sim import report
    from xce.sim.cluster_file import load_cluster_file, parse_size, uniform_cluster
    from xce.sim.engine import SimulationError, simulate
    from xce.sim.swf import read_swf

    if cluster is not None and (hosts is not None or slots_per_host is not None or mem_per_host is not None):
        _fail("give either --cluster FILE or --hosts/--slots-per-host/--mem-per-host, not both")
    try:
        trace = read_swf(workload, max_jobs=max_jobs)
    except OSError as exc:
        _fail(f"cannot read the workload {workload}: {exc.strerror or exc}", 1)
    if cluster is not None:
        try:
            sim_cluster = load_cluster_file(cluster)
        except ConfigError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1)
    else:
        suggested = trace.suggested_cluster()
        if hosts is None and suggested is None:
            _fail(f"{workload} has no MaxNodes/MaxProcs header; give --hosts N --slots-per-host S or --cluster FILE")
        n_hosts = hosts if hosts is not None else suggested[0]  # type: ignore[index]
        slots = slots_per_host if slots_per_host is not None else (
            suggested[1] if suggested is not None and hosts is None else 1)
        try:
            mem = parse_size(mem_per_host) if mem_per_host is not None else None
        except ValueError as exc:
            _fail(f"--mem-per-host: {exc}")
        sim_cluster = uniform_cluster(n_hosts, slots, mem)
    sim_cluster = sim_cluster.with_picker(picker)
    if picker:
        from xce.core.pickers import registry
        from xce.plugins import load_entry_points

        for problem in load_entry_points():
            typer.echo(f"xce sim run: warning: {problem}", err=True)

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

    drift = report.drift_report(trace, drift_min_samples)
    summary = report.summary(result, drift=drift, extra={"seed": seed, "record": str(record) if record else None})
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        report.write_jobs_csv(result, out / "jobs.csv")
        report.write_summary(summary, out / "summary.json")
        (out / "drift.txt").write_text(report.drift_text(drift) + "\n", encoding="utf-8")
        if not no_plots:
            from xce.sim.plots import write_plots

            summary["plots"] = [str(p) for p in write_plots(result, out)]
            report.write_summary(summary, out / "summary.json")
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        typer.echo(report.summary_text(summary))
        typer.echo(report.drift_text(drift))
        if out is not None:
            typer.echo(f"Wrote {out}/jobs.csv, {out}/summary.json, {out}/drift.txt"
                       + ("" if no_plots else " and plots"))


def register(app: typer.Typer) -> None:
    """Attach ``xce sim`` to the main CLI, which belongs to another module."""
    app.add_typer(sim_app, name="sim")


if __name__ == "__main__":
    sim_app(prog_name="python -m xce.cli.sim_cmd")
