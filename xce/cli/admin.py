"""The ``xceadmin`` command: user tokens, configuration reload, scheduler recording.

Commands are registered exactly as for ``xce`` (see :mod:`xce.cli.main`): one line in
:data:`COMMANDS` naming a module with a ``register(app)`` function.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from xce.cli.spec import examples_epilog

from xce.cli.client import call, connect, fail, print_json

UrlOpt = Annotated[str | None, typer.Option("--url", help="Controller URL [env XCE_URL; default from the state dir]",
                                            show_default=False)]
TokenOpt = Annotated[str | None, typer.Option("--token", help="Admin token [env XCE_TOKEN; default from the state "
                                              "dir]", show_default=False)]
StateDirOpt = Annotated[str | None, typer.Option("--state-dir", help="State directory [env XCE_STATE_DIR; ~/.xce]",
                                                 show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]

COMMANDS: dict[str, str] = {
    "user": "xce.cli.admin",
    "reconfig": "xce.cli.admin",
    "scheduler": "xce.cli.admin",
}


def _issue_locally(state_dir: str | None, name: str, admin: bool) -> str | None:
    """Derive the token from the state directory's secret, if this process can read it."""
    from xce.controller import statedir, tokens

    sd = statedir.resolve(state_dir)
    try:
        secret = tokens.load_secret(sd)
    except (OSError, ValueError):
        return None
    try:
        return tokens.make_token(secret, "admin" if admin else "user", name)
    except ValueError as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    user_app = typer.Typer(help="Users and their tokens.", no_args_is_help=True)
    app.add_typer(user_app, name="user")

    @user_app.command("add", help="Issue a token for NAME (from the state directory's secret, or through the API).",
                      epilog=examples_epilog("xceadmin user add ann", "xceadmin user add bob --admin"))
    def user_add(
        name: Annotated[str, typer.Argument(help="User name (the owner of the jobs this token submits).")],
        admin: Annotated[bool, typer.Option("--admin", help="Make the token an admin token.")] = False,
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        issued = None if (url or token) else _issue_locally(state_dir, name, admin)
        if issued is None:
            res = call(connect(url, token, state_dir).post, "/v1/admin/users", {"name": name, "admin": admin})
            issued = res["token"]
        if as_json:
            print_json({"name": name, "role": "admin" if admin else "user", "token": issued})
        else:
            print(issued)

    @app.command(help="Reload the controller's configuration file; an invalid file is refused and nothing changes.",
                 epilog=examples_epilog("xce config check xce.toml && xceadmin reconfig"))
    def reconfig(as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None,
                 state_dir: StateDirOpt = None) -> None:
        res = call(connect(url, token, state_dir).post, "/v1/admin/reconfig")
        if as_json:
            print_json(res)
        elif res["changed"]:
            print(f"Configuration reloaded from {res['config_file']}; pushed to the scheduler.")
        else:
            print(f"Configuration in {res['config_file']} is unchanged.")

    sched_app = typer.Typer(help="Scheduler control.", no_args_is_help=True)
    record_app = typer.Typer(help="Record the scheduler's input events and decisions to a replay file.",
                             no_args_is_help=True)
    app.add_typer(sched_app, name="scheduler")
    sched_app.add_typer(record_app, name="record")

    @record_app.command("start", help="Snapshot, then record every event and decision to FILE.",
                        epilog=examples_epilog("xceadmin scheduler record start /var/tmp/rec.jsonl --record-snapshot-interval 5000",
                                               "xce scheduler --sim /var/tmp/rec.jsonl --sim-verify"))
    def record_start(
        file: Annotated[str | None, typer.Argument(help="Replay file on the scheduler's host "
                                                   "(default: the scheduler's choice).")] = None,
        record_snapshot_interval: Annotated[int | None, typer.Option(
            "--record-snapshot-interval", min=0, help="Append a fresh snapshot every N events (0: only the first).")] = None,
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        res = call(connect(url, token, state_dir).post, "/v1/admin/scheduler/record",
                   {"action": "start", "file": file, "snapshot_interval": record_snapshot_interval})
        if as_json:
            print_json(res)
        else:
            print(f"Recording start requested (control command {res['seq']}); the scheduler picks it up.")

    @record_app.command("stop", help="Stop recording and close the replay file.")
    def record_stop(as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None,
                    state_dir: StateDirOpt = None) -> None:
        res = call(connect(url, token, state_dir).post, "/v1/admin/scheduler/record", {"action": "stop"})
        if as_json:
            print_json(res)
        else:
            print(f"Recording stop requested (control command {res['seq']}).")


def main(argv: list[str] | None = None) -> None:
    from xce.cli.main import build

    args = sys.argv[1:] if argv is None else argv
    app = build(COMMANDS, args, "xceadmin", "XCE administration: users, configuration, scheduler control.")
    app(args=args, prog_name="xceadmin")


if __name__ == "__main__":
    main()
