"""``xce up`` and ``xce down``: a whole cluster on this machine in one command, and gone in another."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xce.cli.spec import examples_epilog

StateDir = Annotated[str | None, typer.Option(help="State directory [env XCE_STATE_DIR; ~/.xce]", show_default=False)]


def register(app: typer.Typer) -> None:
    @app.command(help="Start a controller, a scheduler and N workers on 127.0.0.1, in the background. A personal "
                 "cluster runs every job as you; --multi-user (as root) runs each job as its owner.",
                 epilog=examples_epilog("xce up", "xce up --workers 4 --slots 8 --config examples/preemption.toml",
                                        "XCE_STATE_DIR=/tmp/c1 xce up --state-dir /tmp/c1",
                                        "sudo xce up --multi-user --workers 2 --state-dir /var/lib/xce"))
    def up(
        workers: Annotated[int, typer.Option(help="Number of workers.", min=1)] = 2,
        slots: Annotated[int | None, typer.Option(help="Slots per worker [default: usable CPUs].", min=1,
                                                  show_default=False)] = None,
        state_dir: StateDir = None,
        config: Annotated[Path | None, typer.Option(help="Cluster configuration (TOML).", show_default=False)] = None,
        port: Annotated[int, typer.Option(help="Controller port; 0 picks a free one.")] = 0,
        worker_timeout: Annotated[float, typer.Option(help="Seconds of silence before a worker is unavailable.",
                                                      min=0.1)] = 30.0,
        report_interval: Annotated[float, typer.Option(help="Seconds between worker reports.", min=0.05)] = 2.0,
        round_interval: Annotated[float, typer.Option(help="Least seconds between scheduling rounds.")] = 0.2,
        multi_user: Annotated[bool, typer.Option("--multi-user", help="Run the workers as root so that each job "
                                                 "runs as the user who submitted it (needs root); without it every "
                                                 "job runs as you and only you are served.")] = False,
    ) -> None:
        import os
        import shlex

        if multi_user and os.geteuid() != 0:
            typer.echo("xce up: --multi-user needs root: the workers switch to each job's owner, which only root "
                       "can do (run it with sudo, or leave out --multi-user for a personal cluster)", err=True)
            raise typer.Exit(2)

        from xce.cluster.local import ClusterError, LocalCluster, read_cluster_file
        from xce.controller import statedir

        sd = statedir.resolve(state_dir).absolute()
        existing = read_cluster_file(sd)
        if existing and any(_alive(pid) for pid in existing.get("pids", {}).values()):
            typer.echo(f"xce up: a cluster is already running from {sd} ({existing.get('url')}); "
                       f"stop it with `xce down --state-dir {sd}`", err=True)
            raise typer.Exit(1)
        cluster = LocalCluster(sd, workers, slots, config=config, port=port, worker_timeout=worker_timeout,
                               report_interval=report_interval, round_interval=round_interval,
                               run_as_self=not multi_user)
        try:
            cluster.start()
        except ClusterError as exc:
            typer.echo(f"xce up: the cluster did not start: {exc}", err=True)
            raise typer.Exit(1) from None
        default = statedir.resolve(None).absolute() == sd and not os.environ.get("XCE_STATE_DIR")
        typer.echo(f"XCE cluster up: controller {cluster.url}, scheduler, {workers} worker(s) "
                   f"({', '.join(cluster.worker_names)})")
        typer.echo(f"State and logs: {sd} (logs in {sd / 'logs'})")
        if multi_user:
            typer.echo("Multi-user: each job runs as the user who submitted it. Give each user a token, and them "
                       "the address:")
            typer.echo(f"  xceadmin token create USER --state-dir {shlex.quote(str(sd))}")
            typer.echo(f"  export XCE_URL={cluster.url} XCE_TOKEN=...   # as that user")
        else:
            typer.echo("Personal: every job runs as you, and only you are served "
                       "(`xce up --multi-user`, as root, serves everyone as themselves).")
        typer.echo("")
        if not default:
            typer.echo(f"  export XCE_STATE_DIR={shlex.quote(str(sd))}")
        typer.echo("  xce submit -- sleep 1")
        typer.echo("  xce jobs -a")
        typer.echo("  xce hosts")
        typer.echo("  xce down" + ("" if default else f" --state-dir {shlex.quote(str(sd))}"))

    @app.command(help="Stop the cluster `xce up` started (its controller, scheduler and workers).",
                 epilog=examples_epilog("xce down", "xce down --state-dir /tmp/c1"))
    def down(state_dir: StateDir = None,
             timeout: Annotated[float, typer.Option(help="Seconds to wait before killing.")] = 15.0) -> None:
        from xce.cluster.local import ClusterError
        from xce.cluster.local import down as stop
        from xce.controller import statedir

        sd = statedir.resolve(state_dir).absolute()
        try:
            pids, killed = stop(sd, timeout)
        except ClusterError as exc:
            typer.echo(f"xce down: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"XCE cluster in {sd} stopped ({len(pids)} process(es)"
                   + (f"; {len(killed)} did not stop in {timeout:g}s and were killed)" if killed else ")"))


def _alive(pid: int) -> bool:
    from xce.cluster.local import pid_alive

    return pid_alive(pid)
