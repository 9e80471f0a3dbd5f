"""The ``xceadmin`` command: tokens, configuration reload, scheduler recording, the database schema,
checking a running cluster.

Commands are declared exactly as for ``xce`` (see :mod:`xce.cli.main` and :mod:`xce.cli.spec`):
one line in :data:`COMMANDS` naming a module whose ``COMMAND_SPECS`` declares the command.
"""

from __future__ import annotations

import sys

from xce.cli.spec import JSON, Arg, Command, Group, Opt, Program, common_options
from xce.formats import minute

COMMANDS: dict[str, str] = {
    "user": "xce.cli.admin",
    "token": "xce.cli.admin",
    "host": "xce.cli.admin",
    "queue": "xce.cli.admin",
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


def user_add(name: str, admin: bool, as_json: bool, url: str | None, token: str | None,
             state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json

    res = call(connect(url, token, state_dir).post, "/v1/admin/users", {"name": name, "admin": admin})
    if as_json:
        print_json(res)
    else:
        print(res["token"])


def token_create(name: str, role: str, expires: str | None, note: str, as_json: bool, url: str | None,
                 token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, fail, print_json

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
        print(f"xceadmin: token {res['id']} for {res['name']} (role {res['role']}, expires {minute(res['expires'])})"
              f"; it is not shown again", file=sys.stderr)


def token_list(show_all: bool, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json

    res = call(connect(url, token, state_dir).get, "/v1/admin/tokens", all=str(show_all).lower())
    if as_json:
        print_json(res)
        return
    rows = [("ID", "NAME", "ROLE", "STATUS", "CREATED", "EXPIRES", "NOTE")]
    rows += [(t["id"], t["name"], t["role"], t["status"], minute(t["created"]), minute(t["expires"]), t["note"])
             for t in res["tokens"]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])


def token_revoke(ids: list[str], as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    client = connect(url, token, state_dir)
    done = [call(client.post, f"/v1/admin/tokens/{quote(i)}/revoke") for i in ids]
    if as_json:
        print_json({"tokens": done})
    else:
        for t in done:
            print(f"Token {t['id']} of {t['name']} ({t['role']}) revoked.")


def reconfig(as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json

    res = call(connect(url, token, state_dir).post, "/v1/admin/reconfig")
    if as_json:
        print_json(res)
    elif res["changed"]:
        print(f"Configuration reloaded from {res['config_file']}; pushed to the scheduler.")
    else:
        print(f"Configuration in {res['config_file']} is unchanged.")


def record_start(file: str | None, record_snapshot_interval: int | None, as_json: bool, url: str | None,
                 token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json

    res = call(connect(url, token, state_dir).post, "/v1/admin/scheduler/record",
               {"action": "start", "file": file, "snapshot_interval": record_snapshot_interval})
    if as_json:
        print_json(res)
    else:
        print(f"Recording start requested (control command {res['seq']}); the scheduler picks it up.")


def record_stop(as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json

    res = call(connect(url, token, state_dir).post, "/v1/admin/scheduler/record", {"action": "stop"})
    if as_json:
        print_json(res)
    else:
        print(f"Recording stop requested (control command {res['seq']}).")


def host_down(name: str, requeue: bool, as_json: bool, url: str | None, token: str | None,
              state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/hosts/{quote(name)}/down", {"requeue": requeue})
    if as_json:
        print_json(res)
        return
    print(f"Host {name} is down.")
    if res["ended"]:
        print(f"Ended EXIT (host lost): {' '.join(map(str, res['ended']))}")
    if res["requeued"]:
        print(f"Requeued (rerunnable): {' '.join(map(str, res['requeued']))}")


def host_close(name: str, reason: str, as_json: bool, url: str | None, token: str | None,
               state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/hosts/{quote(name)}/close", {"reason": reason})
    if as_json:
        print_json(res)
    else:
        print(f"Host {name} is closed ({res['closed']}): it finishes its jobs and gets no new ones.")


def host_open(name: str, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/hosts/{quote(name)}/open")
    if as_json:
        print_json(res)
    else:
        print(f"Host {name} is open to new jobs.")


def queue_close(name: str, reason: str, as_json: bool, url: str | None, token: str | None,
                state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/queues/{quote(name)}/close", {"reason": reason})
    if as_json:
        print_json(res)
    else:
        print(f"Queue {name} is closed ({res['reason']}): it takes no new jobs and dispatches none; running "
              f"jobs finish.")


def queue_open(name: str, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/queues/{quote(name)}/open")
    if as_json:
        print_json(res)
    else:
        print(f"Queue {name} is open.")


def host_remove(name: str, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect, print_json, quote

    res = call(connect(url, token, state_dir).post, f"/v1/admin/hosts/{quote(name)}/remove")
    if as_json:
        print_json(res)
    else:
        print(f"Host {name} is removed from the cluster.")


def _admin_options() -> list[Opt]:
    return [JSON, *common_options()]


COMMAND_SPECS = [
    Group("user", "Users and their tokens.", [
        Command("add", "Issue a token for user NAME (the same as `xceadmin token create NAME`).",
                [Arg("name", help="Unix user name (the owner of the jobs this token submits)."),
                 Opt("admin", ("--admin",), bool, False, help="Make the token an admin token."),
                 *_admin_options()],
                user_add, examples=("xceadmin user add ann", "xceadmin user add bob --admin")),
    ], examples=("xceadmin user add ann",)),
    Group("token", "Tokens: issue, list, revoke.", [
        Command("create", "Issue a token for NAME and print it (it is shown only this once).",
                [Arg("name", help="Unix user name (user, admin), host name or '*' (worker), service name "
                                  "(scheduler, metrics)."),
                 Opt("role", ("--role",), default="user", choices=("user", "admin", "worker", "scheduler", "metrics"),
                     help="The token's role (metrics: reads /metrics and nothing else, for a Prometheus scrape job)."),
                 Opt("expires", ("--expires",), metavar="WHEN",
                     help="Lifetime (90d, 12h, 30m, 2w) or expiry time (ISO-8601); default: until revoked."),
                 Opt("note", ("--note",), default="", help="Why the token exists (shown by `token list`)."),
                 *_admin_options()],
                token_create, examples=("xceadmin token create ann --expires 90d",
                                        "xceadmin token create node07 --role worker --note 'rack 3'",
                                        "xceadmin token create ops --role admin --expires 12h")),
        Command("list", "Issued tokens with their id, owner, role, creation and expiry (never the token itself).",
                [Opt("show_all", ("--all",), bool, False, help="Include revoked and expired tokens."),
                 *_admin_options()],
                token_list, examples=("xceadmin token list", "xceadmin token list --all")),
        Command("revoke", "Revoke tokens by id: every later request with them is refused (401).",
                [Arg("ids", many=True, metavar="ID", help="Token ids (from `xceadmin token list`)."),
                 *_admin_options()],
                token_revoke, examples=("xceadmin token revoke 3f2a9c0d1e4b5a67",)),
    ], examples=("xceadmin token create ann --expires 90d", "xceadmin token list")),
    Group("host", "Hosts: declare one down, close it to new jobs, open it again, remove it.", [
        Command("down", "Declare host NAME down: its jobs end EXIT (host lost), or go back to PEND with --requeue "
                        "if they were submitted --rerunnable; when its worker returns it kills what still runs of them.",
                [Arg("name", help="Host name (see `xce hosts`).", complete="hosts"),
                 Opt("requeue", ("--requeue",), bool, False, help="Requeue the host's rerunnable jobs."),
                 *_admin_options()],
                host_down, examples=("xceadmin host down node07", "xceadmin host down node07 --requeue")),
        Command("close", "Close host NAME (badmin hclose, Slurm drain): it finishes its jobs and gets no new ones.",
                [Arg("name", help="Host name (see `xce hosts`).", complete="hosts"),
                 Opt("reason", ("--reason",), default="", help="Why, shown by `xce hosts`."),
                 *_admin_options()],
                host_close, examples=("xceadmin host close node07 --reason 'disk replacement'",)),
        Command("open", "Open host NAME to new jobs again.",
                [Arg("name", help="Host name (see `xce hosts`).", complete="hosts"), *_admin_options()],
                host_open, examples=("xceadmin host open node07",)),
        Command("remove", "Remove decommissioned host NAME from the cluster (LSF: from the cluster file; Slurm: the "
                          "node removed); refused while jobs hold it or its worker reports.",
                [Arg("name", help="Host name (see `xce hosts`).", complete="hosts"), *_admin_options()],
                host_remove, examples=("xceadmin host remove node07",)),
    ], examples=("xceadmin host close node07 --reason 'disk replacement'", "xceadmin host down node07 --requeue")),
    Group("queue", "Queues: close one to new jobs, open it again (kept over a controller restart).", [
        Command("close", "Close queue NAME (badmin qclose): it refuses submissions and dispatches nothing; "
                         "running jobs finish.",
                [Arg("name", help="Queue name (see `xce queues`).", complete="queues"),
                 Opt("reason", ("--reason",), default="", help="Why, shown by `xce queues`."),
                 *_admin_options()],
                queue_close, examples=("xceadmin queue close short --reason 'licence server down'",)),
        Command("open", "Open queue NAME again (badmin qopen).",
                [Arg("name", help="Queue name (see `xce queues`).", complete="queues"), *_admin_options()],
                queue_open, examples=("xceadmin queue open short",)),
    ], examples=("xceadmin queue close short --reason 'licence server down'", "xceadmin queue open short")),
    Command("reconfig", "Reload the controller's configuration file; an invalid file is refused and nothing changes.",
            _admin_options(), reconfig, examples=("xce config check xce.toml && xceadmin reconfig",)),
    Group("scheduler", "Scheduler control.", [
        Group("record", "Record the scheduler's input events and decisions to a replay file.", [
            Command("start", "Snapshot, then record every event and decision to FILE.",
                    [Arg("file", required=False, complete="file",
                         help="Replay file on the scheduler's host (default: the scheduler's choice)."),
                     Opt("record_snapshot_interval", ("--record-snapshot-interval",), int, None, min=0,
                         metavar="N", help="Append a fresh snapshot every N events (0: only the first)."),
                     *_admin_options()],
                    record_start,
                    examples=("xceadmin scheduler record start /var/tmp/rec.jsonl --record-snapshot-interval 5000",
                              "xce scheduler --sim /var/tmp/rec.jsonl --sim-verify")),
            Command("stop", "Stop recording and close the replay file.", _admin_options(), record_stop,
                    examples=("xceadmin scheduler record stop",)),
        ], examples=("xceadmin scheduler record start /var/tmp/rec.jsonl",)),
    ], examples=("xceadmin scheduler record start /var/tmp/rec.jsonl", "xceadmin scheduler record stop")),
]

XCEADMIN = Program("xceadmin", "XCE administration: tokens, configuration, scheduler control, the database, "
                               "checking the cluster.", COMMANDS,
                   examples=("xceadmin token create ann --expires 90d", "xceadmin reconfig", "xceadmin check"))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["__complete"]:  # the shell scripts' question; completion reads the declarations
        from xce.cli.completion import answer

        raise SystemExit(answer(XCEADMIN, args[1:]))
    XCEADMIN.main(args)


if __name__ == "__main__":
    main()
