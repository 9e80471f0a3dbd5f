"""``xce config ...``: working with the cluster configuration file without starting anything.

Operators edit ``xce.toml`` on clusters that are in production; checking a change must be cheap,
side-effect free and scriptable (exit status 1 on any problem), like ``nginx -t`` or ``slurmd -C``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from xce.config.loader import ConfigError, load_config
from xce.config.schema import ClusterConfig

config_app = typer.Typer(
    name="config",
    help="Check and explain the cluster configuration file (xce.toml).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(cfg: ClusterConfig) -> str:
    """The one-line inventory, so an operator sees at a glance that the file says what they meant."""
    return ", ".join(
        [
            _count(len(cfg.queues), "queue"),
            _count(len(cfg.projects), "project"),
            _count(len(cfg.shared_resources), "shared resource"),
        ]
    )


@config_app.command(
    "check",
    epilog=(
        "Example:\n\n"
        "\b\n"
        "  $ xce config check /etc/xce/xce.toml\n"
        "  /etc/xce/xce.toml: OK (3 queues, 1 project, 1 shared resource)\n"
        "  $ xce config check bad.toml\n"
        "  bad.toml:9: queues.low.max_running: expected an integer >= 1, got integer 0\n"
        "  bad.toml: 1 error"
    ),
)
def check(
    files: list[Path] = typer.Argument(..., metavar="FILE", help="Configuration files to check."),
    plugins: bool = typer.Option(
        True,
        "--plugins/--no-plugins",
        help="Check that picker and preemption policy names are registered plugins on this machine.",
    ),
) -> None:
    """Validate configuration files without starting anything.

    Reports every problem, one per line, with the line and the key path; exits 1 if any file has one.
    """
    failed = False
    for file in files:
        try:
            cfg = load_config(file, check_plugins=plugins)
        except ConfigError as exc:
            failed = True
            typer.echo(str(exc), err=True)
            typer.echo(f"{file}: {_count(len(exc.errors), 'error')}", err=True)
            continue
        typer.echo(f"{file}: OK ({summary(cfg)})")
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach ``xce config`` to the main CLI, which belongs to another module."""
    app.add_typer(config_app, name="config")
