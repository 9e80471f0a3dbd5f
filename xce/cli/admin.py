"""The ``xceadmin`` command: tokens, configuration reload, scheduler recording, the database schema,
checking a running cluster.

Commands are registered exactly as for ``xce`` (see :mod:`xce.cli.main`): one line in
:data:`COMMANDS` naming a module with a ``register(app)`` function.
"""

from __future__ import annotations

import sys
from typing import Annotated
from urllib.parse import quote

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
    "token": "xce.cli.admin",
    "reconfig": "xce.cli.admin",
    "scheduler": "xce.cli.admin",
    "db": "xce.cli.db_cmd",
    "check": "xce.cli.check",
}


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_lifetime(text: str) -> int:
    """Seconds from ``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or an ISO-8601 time (``2027-01-31``)."""
    t = text.strip()
    if t[:-1].isdigit() and t[-1:].lower() in _UNITS:
        seconds = int(t[:-1]) * _UNITS[t[-1].lower()]
    else:
        import time

        from xce.replay.format import parse_ts

        try:
            seconds = (parse_ts(t) - time.time_ns()) // 1_000_000_000
        except ValueError:
            raise ValueError(f"--expires {text!r}: expected a lifetime like 90d, 12h, 30m, 2w, or a time like "
                             f"2027-01-31T00:00:00Z") from None
        if seconds <= 0:
            raise ValueError(f"--expires {text!r} is in the past")
    if seconds <= 0:
        raise ValueError(f"--expires {text!r}: the lifetime must be positive")
    return seconds


def _when(ns: int | None) -> str:
    if not ns:
        return "-"
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ns / 1e9))


def register(app: typer.Typer) -> None:
    user_app = typer.Typer(help="Users and their tokens.", no_args_is_help=True)
    app.add_typer(user_app, name="user")

    @user_app.command("add", help="Issue a token for user NAME (the same as `xceadmin token create NAME`).",
                      epilog=examples_epilog("xceadmin user add ann", "xceadmin user add bob --admin"))
    def user_add(
        name: Annotated[str, typer.Argument(help="Unix user name (the owner of the jobs this token submits).")],
        admin: Annotated[bool, typer.Option("--admin", help="Make the token an admin token.")] = False,
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        res = call(connect(url, token, state_dir).post, "/v1/admin/users", {"name": name, "admin": admin})
        if as_json:
            print_json(res)
        else:
            print(res["token"])

    token_app = typer.Typer(help="Tokens: issue, list, revoke.", no_args_is_help=True)
    app.add_typer(token_app, name="token")

    @token_app.command("create", help="Issue a token for NAME and print it (it is shown only this once).",
                       epilog=examples_epilog("xceadmin token create ann --expires 90d",
                                              "xceadmin token create node07 --role worker --note 'rack 3'",
                                              "xceadmin token create ops --role admin --expires 12h"))
    def token_create(
        name: Annotated[str, typer.Argument(help="Unix user name (user, admin), host name or '*' (worker), "
                                           "service name (scheduler).")],
        role: Annotated[str, typer.Option("--role", help="user, admin, worker or scheduler.")] = "user",
        expires: Annotated[str | None, typer.Option("--expires", help="Lifetime (90d, 12h, 30m, 2w) or expiry time "
                                                    "(ISO-8601); default: until revoked.", show_default=False)] = None,
        note: Annotated[str, typer.Option("--note", help="Why the token exists (shown by `token list`).")] = "",
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        try:
            lifetime = parse_lifetime(expires) if expires else None
        except ValueError as exc:
            fail(str(exc), 2)
        res = call(connect(url, token, state_dir).post, "/v1/admin/tokens",
                   {"name": name, "role": role, "expires_in_s": lifetime, "note": note})
        if as_json:
            print_json(res)
        else:
            print(res["token"])
            print(f"xceadmin: token {res['id']} for {res['name']} (role {res['role']}, expires {_when(res['expires'])})"
                  f"; it is not shown again", file=sys.stderr)

    @token_app.command("list", help="Issued tokens with their id, owner, role, creation and expiry (never the "
                       "token itself).", epilog=examples_epilog("xceadmin token list", "xceadmin token list --all"))
    def token_list(
        show_all: Annotated[bool, typer.Option("--all", help="Include revoked and expired tokens.")] = False,
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        res = call(connect(url, token, state_dir).get, "/v1/admin/tokens", all=str(show_all).lower())
        if as_json:
            print_json(res)
            return
        rows = [("ID", "NAME", "ROLE", "STATUS", "CREATED", "EXPIRES", "NOTE")]
        rows += [(t["id"], t["name"], t["role"], t["status"], _when(t["created"]), _when(t["expires"]), t["note"])
                 for t in res["tokens"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])

    @token_app.command("revoke", help="Revoke tokens by id: every later request with them is refused (401).",
                       epilog=examples_epilog("xceadmin token revoke 3f2a9c0d1e4b5a67"))
    def token_revoke(
        ids: Annotated[list[str], typer.Argument(help="Token ids (from `xceadmin token list`).")],
        as_json: JsonOpt = False, url: UrlOpt = None, token: TokenOpt = None, state_dir: StateDirOpt = None,
    ) -> None:
        client = connect(url, token, state_dir)
        done = [call(client.post, f"/v1/admin/tokens/{quote(i, safe='')}/revoke") for i in ids]
        if as_json:
            print_json({"tokens": done})
        else:
            for t in done:
                print(f"Token {t['id']} of {t['name']} ({t['role']}) revoked.")

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
    app = build(COMMANDS, args, "xceadmin", "XCE administration: users, configuration, scheduler control, "
                                             "the database, checking the cluster.")
    app(args=args, prog_name="xceadmin")


if __name__ == "__main__":
    main()
