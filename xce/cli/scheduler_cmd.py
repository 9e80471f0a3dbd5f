"""``xce scheduler``: the scheduler process, in normal mode or, with ``--sim FILE``, in simulation mode.

Simulation mode needs nothing but the replay file, so it is also runnable on its own
(``python -m xce.cli.scheduler_cmd --sim FILE --sim-verify``) for tests and for machines without
the rest of the CLI. Exit status: 0 ok, 1 verification found mismatches, 2 a bad file or option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from xce.cli.spec import examples_epilog


def _ts(value: Optional[str], option: str) -> Optional[int]:
    if value is None:
        return None
    from xce.replay.format import parse_ts

    try:
        return parse_ts(value)
    except ValueError as exc:
        typer.echo(f"{option}: {exc}", err=True)
        raise typer.Exit(2) from None


def scheduler(
    sim: Optional[Path] = typer.Option(None, "--sim", metavar="FILE",
                                       help="Simulation mode: replay this recording through the core."),
    sim_start_ts: Optional[str] = typer.Option(None, "--sim-start-ts", metavar="TS",
                                               help="Start from the newest snapshot at or before TS "
                                                    "(integer ns or ISO-8601 UTC; default: the file's start)."),
    sim_speed: int = typer.Option(0, "--sim-speed", min=0, metavar="N",
                                  help="0 = as fast as possible, 1 = real time, N = N times real time."),
    sim_pause_at: Optional[str] = typer.Option(None, "--sim-pause-at", metavar="TS",
                                               help="Pause before the first event later than TS."),
    sim_verify: bool = typer.Option(False, "--sim-verify",
                                    help="Compare every decision with the recorded ones; exit 1 on any mismatch."),
    sim_alt_events: Optional[Path] = typer.Option(None, "--sim-alt-events", metavar="FILE",
                                                  help="What-if: take the events from FILE instead of the recording."),
    seed: int = typer.Option(0, "--seed", help="PRNG seed for the core (a snapshot carries its own)."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    url: Optional[str] = typer.Option(None, "--url", help="Normal mode: the controller URL, or several separated "
                                                          "by commas (default $XCE_URL)."),
    token: Optional[str] = typer.Option(None, "--token", help="Normal mode: the scheduler's token."),
    state_dir: Optional[str] = typer.Option(None, "--state-dir", help="Normal mode: the controller's state directory."),
    round_interval: float = typer.Option(0.2, "--round-interval", help="Normal mode: seconds between rounds."),
    max_round_interval: float = typer.Option(5.0, "--max-round-interval",
                                             help="Normal mode: longest wait between rounds."),
    record_snapshot_interval: int = typer.Option(10_000, "--record-snapshot-interval", min=0, metavar="N",
                                                 help="Normal mode: snapshot every N recorded events "
                                                      "(0 = only the first)."),
    log_level: str = typer.Option("INFO", "--log-level", help="Normal mode: DEBUG (a line per round), INFO, "
                                                                "WARNING, ERROR."),
    log_format: Optional[str] = typer.Option(None, "--log-format",
                                             help="Normal mode: text or json [env XCE_LOG_FORMAT]."),
) -> None:
    """Run the scheduler; with --sim, replay a recording on a virtual clock instead."""
    if sim is None:
        try:
            from xce.scheduler import normal_driver  # type: ignore[attr-defined]
        except ImportError:
            typer.echo("normal mode is not available in this build", err=True)
            raise typer.Exit(2) from None
        sim_only = [name for name, value in (("--sim-start-ts", sim_start_ts), ("--sim-pause-at", sim_pause_at),
                                             ("--sim-alt-events", sim_alt_events), ("--sim-verify", sim_verify),
                                             ("--sim-speed", sim_speed)) if value]
        if sim_only:
            typer.echo(f"{', '.join(sim_only)} need(s) --sim FILE", err=True)
            raise typer.Exit(2)
        normal_driver.main(url=url, token=token, state_dir=state_dir, seed=seed, round_interval=round_interval,
                           max_round_interval=max_round_interval, record_snapshot_interval=record_snapshot_interval,
                           log_level=log_level, log_format=log_format)
        return
    from xce.plugins import load_entry_points
    from xce.replay.reader import ReplayFileError
    from xce.scheduler.sim_driver import SimDriver

    for problem in load_entry_points():
        typer.echo(f"xce scheduler: warning: {problem}", err=True)
    driver = SimDriver(sim, start_ts=_ts(sim_start_ts, "--sim-start-ts"), speed=sim_speed,
                       pause_at=_ts(sim_pause_at, "--sim-pause-at"), verify=sim_verify,
                       alt_events=sim_alt_events, seed=seed)
    try:
        summary = driver.run()
    except (ReplayFileError, OSError) as exc:
        for w in driver.warnings:
            typer.echo(w, err=True)
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    driver.report(summary, as_json=json_out)
    raise typer.Exit(driver.exit_code)


def register(app: typer.Typer) -> None:
    """Attach ``xce scheduler`` to the main CLI, which belongs to another module."""
    app.command("scheduler", help="Run the scheduler (normal mode) or replay a recording (--sim FILE).",
                epilog=examples_epilog("xce scheduler", "xce scheduler --sim rec.jsonl --sim-verify",
                                       "xce scheduler --sim rec.jsonl --sim-start-ts 2026-11-30T10:00:00Z",
                                       "xce scheduler --sim rec.jsonl --sim-alt-events whatif.jsonl --sim-verify"))(scheduler)


def _standalone() -> typer.Typer:
    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.command()(scheduler)
    return app


if __name__ == "__main__":
    _standalone()()
