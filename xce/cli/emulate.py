"""``xce emulate-hosts N``: many emulated hosts in one process, for tests and benchmarks."""

from __future__ import annotations

from xce.cli.spec import LOG_LEVELS, Arg, Command, Opt, upper


def emulate_hosts(count: int, prefix: str, slots: int, mem: str, run_time: float | None, state_dir: str | None,
                  url: str | None, token: str | None, log_level: str) -> int:
    from xce.worker.emulated import main

    return main(count=count, prefix=prefix, slots=slots, mem=mem, run_time=run_time, state_dir=state_dir, url=url,
                token=token, log_level=log_level)


COMMAND_SPECS = [Command(
    "emulate-hosts", "Register N emulated hosts that take jobs through the real protocol but run nothing "
                     "(for tests and benchmarks of the controller and scheduler; not a worker).",
    [
        Arg("count", int, help="How many hosts to emulate.", metavar="N"),
        Opt("prefix", ("--prefix",), str, "emu", metavar="PREFIX",
            help="Host names are PREFIX0001, PREFIX0002 ..."),
        Opt("slots", ("--slots",), int, 8, min=1, metavar="N", help="Job slots of each host."),
        Opt("mem", ("--mem",), str, "64G", metavar="BYTES", help="Memory of each host (e.g. 64G)."),
        Opt("run_time", ("--run-time",), float, None, min=0, metavar="SECONDS",
            help="How long every job runs [default: N of a `sleep N` command, else its run limit, else 0]."),
        Opt("state_dir", ("--state-dir",), complete="dir",
            help="Controller state directory to read the address and worker token from [env XCE_STATE_DIR; ~/.xce]."),
        Opt("url", ("--url",), help="Controller URL, or several separated by commas [env XCE_URL]."),
        Opt("token", ("--token",), help="Worker token [env XCE_WORKER_TOKEN]."),
        Opt("log_level", ("--log-level",), upper, "WARNING", choices=LOG_LEVELS, metavar="LEVEL",
            help="Logging level: DEBUG, INFO, WARNING, ERROR."),
    ],
    emulate_hosts,
    examples=("xce emulate-hosts 1000", "xce emulate-hosts 200 --slots 4 --run-time 2"),
)]
