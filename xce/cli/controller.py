"""``xce controller``: run the controller service in the foreground."""

from __future__ import annotations

from xce.cli.spec import LOG_FORMATS, LOG_LEVELS, Command, Opt, path, upper


def controller(host: str, port: int, state_dir: str | None, db: str | None, config, worker_timeout: float,
               event_retention: int, advertise_url: str | None, lease_timeout: float, log_level: str,
               log_format: str | None, single_user: str | None) -> int:
    import shlex
    import sys

    from xce import logs
    from xce.client import statedir

    try:
        logs.configure("controller", log_level, log_format or None)
    except ValueError as exc:
        print(f"xce controller: {exc}", file=sys.stderr)
        return 2
    if advertise_url:
        from xce.client.urls import parse_urls

        try:
            (advertise_url,) = parse_urls(advertise_url, "--advertise-url")
        except ValueError as exc:
            print(f"xce controller: {exc}", file=sys.stderr)
            return 2
    from sqlalchemy.exc import SQLAlchemyError

    from xce.config.loader import ConfigError
    from xce.controller.server import serve
    from xce.controller.service import Settings
    from xce.controller.store.engine import StoreURLError

    sd = statedir.resolve(state_dir)
    hint = "xceadmin db upgrade " + (f"--db {shlex.quote(_masked(db))}" if db else f"--state-dir {shlex.quote(str(sd))}")
    settings = Settings(state_dir=sd, db=db, config_path=config, worker_timeout=worker_timeout,
                        event_retention=event_retention, host=host, port=port, url=advertise_url or "",
                        lease_s=lease_timeout, upgrade_hint=hint, single_user=single_user)
    try:
        serve(settings)
    except ConfigError as exc:
        print(f"xce controller: invalid configuration:\n{exc}", file=sys.stderr)
        return 1
    except (RuntimeError, StoreURLError, OSError) as exc:
        print(f"xce controller: {exc}", file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:
        print(f"xce controller: cannot use the database: {exc}", file=sys.stderr)
        return 1
    return 0


def _masked(url: str) -> str:
    """A database URL fit for a message: the password replaced by ***."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is reported elsewhere
        return url


COMMAND_SPECS = [Command(
    "controller", "Run the controller (REST API, store, event log) until interrupted.",
    [
        Opt("host", ("--host",), default="127.0.0.1", help="Address to bind; loopback by default."),
        Opt("port", ("--port",), int, 0, min=0, max=65535, show_default=False,
            help="Port to bind; 0 picks a free one (see controller.json)."),
        Opt("state_dir", ("--state-dir",), complete="dir", help="State directory [env XCE_STATE_DIR; ~/.xce]"),
        Opt("db", ("--db",), env="XCE_DB", metavar="URL",
            help="Database URL (postgresql://...), shared by every controller of the cluster; default: SQLite file "
                 "xce.db in the state directory (the environment keeps a password out of `ps`)."),
        Opt("config", ("--config",), path, metavar="FILE", help="Cluster configuration (TOML)."),
        Opt("worker_timeout", ("--worker-timeout",), float, 30.0, min=0.1, metavar="SECONDS",
            help="Seconds of silence before a worker is unreachable (its running jobs UNKWN, holding their slots)."),
        Opt("event_retention", ("--event-retention",), int, 200_000, min=1000, metavar="N",
            help="Events kept in the scheduler feed."),
        Opt("advertise_url", ("--advertise-url",), metavar="URL",
            help="The URL other hosts reach this controller at, given to clients by the other controllers "
                 "[default: http://HOST:PORT, this host's name when --host is a wildcard]."),
        Opt("lease_timeout", ("--lease-timeout",), float, 3.0, min=0.5, metavar="SECONDS",
            help="Seconds a leader's lease lasts without renewal (several controllers on one PostgreSQL "
                 "database): a follower takes over within about 1.25x this after the leader dies."),
        Opt("log_level", ("--log-level",), upper, "WARNING", choices=LOG_LEVELS, metavar="LEVEL",
            help="Logging level: DEBUG, INFO (job state changes), WARNING, ERROR."),
        Opt("log_format", ("--log-format",), choices=LOG_FORMATS, metavar="FORMAT",
            show_default=False, help="Log format: text or json [env XCE_LOG_FORMAT]."),
        Opt("single_user", ("--single-user",), metavar="USER",
            help="A personal cluster whose workers run every job as USER: serve only USER and the admin token "
                 "(what `xce up` does without --multi-user)."),
    ],
    controller,
    examples=("xce controller --config examples/laptop.toml", "xce controller --db postgresql://xce@db/xce --port 6820",
              "XCE_DB=postgresql://xce@db/xce xce controller --host 0.0.0.0 --port 6820 "
              "--advertise-url http://ctl1.example.com:6820"),
)]
