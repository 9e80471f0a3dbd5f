"""``xce worker``: run the worker agent for this host in the foreground."""

from __future__ import annotations

from xce.cli.spec import LOG_FORMATS, LOG_LEVELS, Command, Opt, upper


def worker(name: str | None, slots: int | None, state_dir: str | None, url: str | None, token: str | None,
           work_dir: str | None, report_interval: float, run_as_self: bool, allow_root_jobs: bool,
           stop_jobs_on_exit: bool, log_level: str, log_format: str | None, containment: str, cgroup_parent: str,
           pids_max: int | None, freeze: bool, task_port: int, spool_dir: str | None, feature: list[str],
           model: str | None, host_type: str | None, fake_gpus: str | None) -> int:
    from xce.worker.agent import main

    return main(name=name, slots=slots, state_dir=state_dir, url=url, token=token, work_dir=work_dir,
                report_interval=report_interval, run_as_self=run_as_self, allow_root_jobs=allow_root_jobs,
                stop_jobs_on_exit=stop_jobs_on_exit, log_level=log_level, log_format=log_format,
                containment=containment, cgroup_parent=cgroup_parent, pids_max=pids_max, freeze=freeze,
                task_port=task_port, spool_dir=spool_dir, features=tuple(feature or ()), model=model, host_type=host_type,
                fake_gpus=fake_gpus)


COMMAND_SPECS = [Command(
    "worker", "Run the worker agent on this host: register, run the jobs placed here, report.",
    [
        Opt("name", ("--name",), help="Host name to register [default: this machine's hostname]."),
        Opt("slots", ("--slots",), int, None, min=1, metavar="N", help="Job slots [default: usable CPUs]."),
        Opt("state_dir", ("--state-dir",), complete="dir",
            help="Controller state directory to read the address and worker token from [env XCE_STATE_DIR; ~/.xce]."),
        Opt("url", ("--url",), help="Controller URL, or several separated by commas (the worker follows the leader) "
                                    "[env XCE_URL]."),
        Opt("token", ("--token",), help="Worker token [env XCE_WORKER_TOKEN]."),
        Opt("work_dir", ("--work-dir",), complete="dir",
            help="Directory for job output files when a job names none [default: the job's working directory]."),
        Opt("spool_dir", ("--spool-dir",), complete="dir",
            help="Directory for the jobs' spooled scripts; every job owner must be able to pass through its parents "
                 "[default: /var/spool/xce/NAME for a worker running as root, else in the state directory]."),
        Opt("report_interval", ("--report-interval",), float, 3.0, min=0.05, metavar="SECONDS",
            help="Seconds between load and usage reports."),
        Opt("run_as_self", ("--run-as-self",), bool, False,
            help="Run every job as the worker's own user (a personal cluster), whoever submitted it."),
        Opt("allow_root_jobs", ("--allow-root-jobs",), bool, False, help="Let jobs owned by root run as root."),
        Opt("stop_jobs_on_exit", ("--stop-jobs-on-exit",), bool, False,
            help="Kill running jobs when the worker stops (default: leave them for the next start)."),
        Opt("containment", ("--containment",), str, "auto",
            choices=("auto", "cgroup-v2", "cgroup-v1", "process-group"), metavar="KIND",
            help="How jobs are held together: auto (cgroup v2, else v1, else process groups), cgroup-v2, "
                 "cgroup-v1 or process-group."),
        Opt("cgroup_parent", ("--cgroup-parent",), str, "xce", metavar="PATH",
            help="Control group under which this worker makes <PATH>/<name>/job_<id>."),
        Opt("pids_max", ("--pids-max",), int, None, min=1, metavar="N",
            help="Most processes and threads one job may have (the pids controller) [default: no limit]."),
        Opt("freeze", ("--freeze",), bool, False,
            help="Suspend jobs with the cgroup freezer instead of a signal to each process."),
        Opt("task_port", ("--task-port",), int, 0, min=0, max=65535, metavar="PORT", show_default=False,
            help="TCP port where `xce launch` starts the tasks of parallel jobs on this host [default: any free "
                 "one, advertised to the controller]."),
        Opt("feature", ("--feature",), multiple=True, metavar="NAME[,NAME...]",
            help="A feature of this host (Slurm's node features: `sbatch --constraint` and `select[NAME]` match it); "
                 "repeat or separate with commas. The configuration's `[hosts.NAME] features` are added."),
        Opt("model", ("--model",), metavar="MODEL",
            help="The host model (`lshosts`, `select[model == MODEL]`); `[hosts.NAME] model` wins."),
        Opt("host_type", ("--type",), metavar="TYPE",
            help="The host type [default: the machine's architecture, X86_64]; `[hosts.NAME] type` wins."),
        Opt("fake_gpus", ("--fake-gpus",), metavar="MODEL:N", env="XCE_FAKE_GPUS",
            help="Advertise N GPUs of MODEL instead of asking NVML (tests, sites without NVIDIA's library); "
                 "jobs get device indexes as with real ones."),
        Opt("log_level", ("--log-level",), upper, "WARNING", choices=LOG_LEVELS, metavar="LEVEL",
            help="Logging level: DEBUG, INFO, WARNING, ERROR."),
        Opt("log_format", ("--log-format",), choices=LOG_FORMATS, metavar="FORMAT",
            help="Log format: text or json [env XCE_LOG_FORMAT]."),
    ],
    worker,
    examples=("xce worker", "xce worker --name node07 --slots 16"),
)]
