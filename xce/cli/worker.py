"""``xce worker``: run the worker agent for this host in the foreground."""

from __future__ import annotations

from typing import Annotated

import typer

from xce.cli.spec import examples_epilog


def register(app: typer.Typer) -> None:
    @app.command(help="Run the worker agent on this host: register, run the jobs placed here, report.",
                 epilog=examples_epilog("xce worker", "xce worker --name node07 --slots 16"))
    def worker(
        name: Annotated[str | None, typer.Option(help="Host name to register [default: this machine's hostname].",
                                                 show_default=False)] = None,
        slots: Annotated[int | None, typer.Option(help="Job slots [default: usable CPUs].", min=1,
                                                  show_default=False)] = None,
        state_dir: Annotated[str | None, typer.Option(help="Controller state directory to read the address and "
                                                      "worker token from [env XCE_STATE_DIR; ~/.xce].",
                                                      show_default=False)] = None,
        url: Annotated[str | None, typer.Option(help="Controller URL, or several separated by commas (the worker "
                                                "follows the leader) [env XCE_URL].", show_default=False)] = None,
        token: Annotated[str | None, typer.Option(help="Worker token [env XCE_WORKER_TOKEN].",
                                                  show_default=False)] = None,
        work_dir: Annotated[str | None, typer.Option(help="Directory for job output files when a job names none "
                                                     "[default: the job's working directory].",
                                                     show_default=False)] = None,
        report_interval: Annotated[float, typer.Option(help="Seconds between load and usage reports.",
                                                       min=0.05)] = 3.0,
        run_as_self: Annotated[bool, typer.Option("--run-as-self", help="Run every job as the worker's own user "
                                                  "(a personal cluster), whoever submitted it.")] = False,
        allow_root_jobs: Annotated[bool, typer.Option("--allow-root-jobs",
                                                      help="Let jobs owned by root run as root.")] = False,
        stop_jobs_on_exit: Annotated[bool, typer.Option("--stop-jobs-on-exit", help="Kill running jobs when the "
                                                        "worker stops (default: leave them for the next start).")] = False,
        log_level: Annotated[str, typer.Option(help="Logging level: DEBUG, INFO, WARNING, ERROR.")] = "WARNING",
        log_format: Annotated[str | None, typer.Option(help="Log format: text or json [env XCE_LOG_FORMAT].",
                                                       show_default=False)] = None,
    ) -> None:
        from xce.worker.agent import main

        code = main(name=name, slots=slots, state_dir=state_dir, url=url, token=token, work_dir=work_dir,
                    report_interval=report_interval, run_as_self=run_as_self, allow_root_jobs=allow_root_jobs,
                    stop_jobs_on_exit=stop_jobs_on_exit, log_level=log_level, log_format=log_format)
        if code:
            raise typer.Exit(code)
