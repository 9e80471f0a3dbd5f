"""The ``xce`` command line.

Commands are loaded lazily: ``xce jobs`` imports the module that defines ``jobs`` and nothing else,
because the CLI runs in shell loops and a client command must start in well under 150 ms (no
FastAPI, SQLAlchemy, uvicorn, numpy or scheduling core in a client process). The commands that talk
to the controller go one step further and skip typer itself when the command line is well-formed
(see :mod:`xce.cli.spec`); ``--help``, completion and usage errors always go through typer.

Adding a command takes one line in :data:`COMMANDS`: the command name and the module that
defines it. The module has a ``register(app: typer.Typer) -> None`` that adds its commands with
``@app.command()`` (or a sub-app with ``app.add_typer(sub, name="...")``), and keeps its own heavy
imports inside the command functions::

    # xce/cli/worker.py
    import typer

    def register(app: typer.Typer) -> None:
        @app.command(help="Run the worker agent on this host.")
        def worker(url: str | None = None) -> None:
            from xce.worker.agent import run   # heavy imports here, not at module level
            run(url)

    # xce/cli/main.py
    COMMANDS = {..., "worker": "xce.cli.worker"}

One module may define several commands (list each name). ``xce --help`` and shell completion load
every module.

A command that talks to the controller and is run in loops can instead be declared as data, which
gives it the typer-free fast path as well: list :class:`xce.cli.spec.Command` objects in the module's
``COMMAND_SPECS`` and register them (see ``xce/cli/jobctl.py``)::

    COMMAND_SPECS = [Command("drain", "Close a host to new jobs.",
                             [Arg("host", help="Host name."), JSON, *common_options()], drain)]

    def register(app):
        for c in COMMAND_SPECS:
            c.register(app)

Shared pieces: ``common_options()`` (``--url``, ``--token``, ``--state-dir``) and ``JSON`` in
:mod:`xce.cli.spec`; :func:`xce.cli.client.connect` / :func:`~xce.cli.client.call` for requests; exit
codes 0 ok, 1 refused/failed, 2 usage, 3 controller unreachable.
"""

from __future__ import annotations

import importlib
import os
import sys

#: command name -> module whose ``register(app)`` defines it.
COMMANDS: dict[str, str] = {
    "controller": "xce.cli.controller",
    "submit": "xce.cli.submit",
    "jobs": "xce.cli.jobs",
    "kill": "xce.cli.jobctl",
    "suspend": "xce.cli.jobctl",
    "resume": "xce.cli.jobctl",
    "modify": "xce.cli.jobctl",
    "drift": "xce.cli.drift",
    "hosts": "xce.cli.cluster",
    "load": "xce.cli.cluster",
    "queues": "xce.cli.cluster",
    "demo": "xce.cli.demo",
    "config": "xce.cli.config_cmd",
    "sim": "xce.cli.sim_cmd",
    "scheduler": "xce.cli.scheduler_cmd",
    "worker": "xce.cli.worker",
    "up": "xce.cli.up",
    "down": "xce.cli.up",
}


def _command_name(argv: list[str]) -> str | None:
    """The first word that is not an option: the command the user asked for."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build(commands: dict[str, str], argv: list[str], prog: str, help_text: str):
    """A typer app with only the module(s) ``argv`` needs registered (all of them for help/completion)."""
    import typer

    app = typer.Typer(name=prog, help=help_text, no_args_is_help=True, add_completion=True,
                      pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.callback()
    def _root() -> None:
        """Keeps typer in multi-command mode even when a single command is registered."""

    name = _command_name(argv)
    completing = any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)
    if name in commands and not completing:
        wanted = [commands[name]]
    else:
        wanted = list(dict.fromkeys(commands.values()))
    for module in wanted:
        importlib.import_module(module).register(app)
    return app


def _fast(commands: dict[str, str], argv: list[str]) -> bool:
    """Run a client command without typer when its module declares it as a :class:`~xce.cli.spec.Command`
    and ``argv`` is well-formed; False sends the command line to typer."""
    name = argv[0] if argv else None
    if name not in commands:
        return False
    module = importlib.import_module(commands[name])
    for command in getattr(module, "COMMAND_SPECS", ()):
        if command.name == name:
            kwargs = command.parse(argv[1:])
            if kwargs is None:
                return False
            command.run(**kwargs)
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if _fast(COMMANDS, args):
        return
    app = build(COMMANDS, args, "xce", "XCE: submit and watch batch jobs, and run the cluster's services.")
    app(args=args, prog_name="xce")


if __name__ == "__main__":
    main()
