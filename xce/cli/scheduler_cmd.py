"""``xce scheduler``: the scheduler process, in normal mode or, with ``--sim FILE``, in simulation mode.

Simulation mode needs nothing but the replay file, so it is also runnable on its own
(``python -m xce.cli.scheduler_cmd --sim FILE --sim-verify``) for tests and for machines without
the rest of the CLI. Exit status: 0 ok, 1 verification found mismatches, 2 a bad file or option.
"""

from __future__ import annotations

import sys

from xce.cli.spec import LOG_FORMATS, LOG_LEVELS, Command, Opt, UsageError, path, standalone, upper


def _ts(text: str) -> int:
    from xce.replay.format import parse_ts

    return parse_ts(text)


def scheduler(sim, sim_start_ts: int | None, sim_speed: int, sim_pause_at: int | None, sim_verify: bool,
              sim_alt_events, seed: int, json_out: bool, url: str | None, token: str | None,
              state_dir: str | None, round_interval: float | None, max_round_interval: float | None,
              record_snapshot_interval: int, log_level: str, log_format: str | None) -> int:
    """Run the scheduler; with --sim, replay a recording on a virtual clock instead."""
    if sim is None:
        sim_only = [name for name, value in (("--sim-start-ts", sim_start_ts), ("--sim-pause-at", sim_pause_at),
                                             ("--sim-alt-events", sim_alt_events), ("--sim-verify", sim_verify),
                                             ("--sim-speed", sim_speed)) if value]
        if sim_only:
            raise UsageError(f"{', '.join(sim_only)} need(s) --sim FILE")
        try:
            from xce.scheduler import normal_driver  # type: ignore[attr-defined]
        except ImportError:
            print("normal mode is not available in this build", file=sys.stderr)
            return 2
        normal_driver.main(url=url, token=token, state_dir=state_dir, seed=seed, round_interval=round_interval,
                           max_round_interval=max_round_interval, record_snapshot_interval=record_snapshot_interval,
                           log_level=log_level, log_format=log_format)
        return 0
    from xce.plugins import load_entry_points
    from xce.replay.reader import ReplayFileError
    from xce.scheduler.sim_driver import SimDriver

    for problem in load_entry_points():
        print(f"xce scheduler: warning: {problem}", file=sys.stderr)
    driver = SimDriver(sim, start_ts=sim_start_ts, speed=sim_speed, pause_at=sim_pause_at, verify=sim_verify,
                       alt_events=sim_alt_events, seed=seed)
    try:
        summary = driver.run()
    except (ReplayFileError, OSError) as exc:
        for w in driver.warnings:
            print(w, file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    driver.report(summary, as_json=json_out)
    return driver.exit_code


SIM = "Simulation (--sim FILE)"
NORMAL = "Normal mode"

SCHEDULER = Command(
    "scheduler", "Run the scheduler (normal mode) or replay a recording (--sim FILE).",
    [
        Opt("sim", ("--sim",), path, metavar="FILE", section=SIM,
            help="Simulation mode: replay this recording through the core."),
        Opt("sim_start_ts", ("--sim-start-ts",), _ts, metavar="TS", section=SIM,
            help="Start from the newest snapshot at or before TS (integer ns or ISO-8601 UTC; default: the file's "
                 "start)."),
        Opt("sim_speed", ("--sim-speed",), int, 0, min=0, metavar="N", section=SIM, show_default=False,
            help="0 = as fast as possible, 1 = real time, N = N times real time."),
        Opt("sim_pause_at", ("--sim-pause-at",), _ts, metavar="TS", section=SIM,
            help="Pause before the first event later than TS."),
        Opt("sim_verify", ("--sim-verify",), bool, False, section=SIM,
            help="Compare every decision with the recorded ones; exit 1 on any mismatch."),
        Opt("sim_alt_events", ("--sim-alt-events",), path, metavar="FILE", section=SIM,
            help="What-if: take the events from FILE instead of the recording."),
        Opt("json_out", ("--json",), bool, False, section=SIM, help="Print the summary as JSON."),
        Opt("seed", ("--seed",), int, 0, help="PRNG seed for the core (a snapshot carries its own).", show_default=False),
        Opt("url", ("--url",), section=NORMAL,
            help="The controller URL, or several separated by commas (default $XCE_URL)."),
        Opt("token", ("--token",), section=NORMAL, help="The scheduler's token."),
        Opt("state_dir", ("--state-dir",), section=NORMAL, complete="dir", help="The controller's state directory."),
        Opt("round_interval", ("--round-interval",), float, None, min=0.0, metavar="SECONDS", section=NORMAL,
            help="Least time between rounds while events arrive (default: [scheduler] round_interval_s, 0.2)."),
        Opt("max_round_interval", ("--max-round-interval",), float, None, min=0.0, metavar="SECONDS", section=NORMAL,
            help="Longest wait between rounds (default: [scheduler] max_round_interval_s, 5)."),
        Opt("record_snapshot_interval", ("--record-snapshot-interval",), int, 10_000, min=0, metavar="N",
            section=NORMAL, help="Snapshot every N recorded events (0 = only the first)."),
        Opt("log_level", ("--log-level",), upper, "INFO", choices=LOG_LEVELS, metavar="LEVEL", section=NORMAL,
            help="DEBUG (a line per round), INFO, WARNING, ERROR."),
        Opt("log_format", ("--log-format",), choices=LOG_FORMATS, metavar="FORMAT", section=NORMAL,
            help="text or json [env XCE_LOG_FORMAT]."),
    ],
    scheduler,
    examples=("xce scheduler", "xce scheduler --sim rec.jsonl --sim-verify",
              "xce scheduler --sim rec.jsonl --sim-start-ts 2026-11-30T10:00:00Z",
              "xce scheduler --sim rec.jsonl --sim-alt-events whatif.jsonl --sim-verify"),
)

COMMAND_SPECS = [SCHEDULER]


if __name__ == "__main__":
    standalone(SCHEDULER, "python -m xce.cli.scheduler_cmd")
