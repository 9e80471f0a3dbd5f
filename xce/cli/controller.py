"""``xce controller``: run the controller service in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xce.cli.spec import examples_epilog


def register(app: typer.Typer) -> None:
    @app.command(help="Run the controller (REST API, store, event log) until interrupted.",
                 epilog=examples_epilog("xce controller --config examples/laptop.toml",
                                        "xce controller --db postgresql://xce@db/xce --port 6820",
                                        "XCE_DB=postgresql://xce@db/xce xce controller --host 0.0.0.0 --port 6820 "
                                        "--advertise-url http://ctl1.example.com:6820"))
    def controller(
        host: Annotated[str, typer.Option(help="Address to bind; loopback by default.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to bind; 0 picks a free one (see controller.json).")] = 0,
        state_dir: Annotated[str | None, typer.Option(help="State directory [env XCE_STATE_DIR; ~/.xce]",
                                                      show_default=False)] = None,
        db: Annotated[str | None, typer.Option(envvar="XCE_DB", help="Database URL (postgresql://...), shared by "
                                               "every controller of the cluster; default: SQLite file xce.db in the "
                                               "state directory [env XCE_DB: keeps a password out of `ps`].",
                                               show_default=False)] = None,
        config: Annotated[Path | None, typer.Option(help="Cluster configuration (TOML).", show_default=False)] = None,
        worker_timeout: Annotated[float, typer.Option(help="Seconds of silence before a worker is unavailable "
                                                      "and its jobs are lost.", min=0.1)] = 30.0,
        event_retention: Annotated[int, typer.Option(help="Events kept in the scheduler feed.", min=1000)] = 200_000,
        advertise_url: Annotated[str | None, typer.Option(
            help="The URL other hosts reach this controller at, given to clients by the other controllers "
                 "[default: http://HOST:PORT, this host's name when --host is a wildcard].",
            show_default=False)] = None,
        lease_timeout: Annotated[float, typer.Option(
            help="Seconds a leader's lease lasts without renewal (several controllers on one PostgreSQL "
                 "database): a follower takes over within about 1.25x this after the leader dies.",
            min=0.5)] = 3.0,
        log_level: Annotated[str, typer.Option(help="Logging level: DEBUG, INFO (job state changes), WARNING, "
                                               "ERROR.")] = "WARNING",
        log_format: Annotated[str, typer.Option(help="Log format: text or json [env XCE_LOG_FORMAT].",
                                                show_default=False)] = "",
        single_user: Annotated[str | None, typer.Option(help="A personal cluster whose workers run every job as "
                                                        "USER: serve only USER and the admin token (what `xce up` "
                                                        "does without --multi-user).", metavar="USER",
                                                        show_default=False)] = None,
    ) -> None:
        import shlex
        import sys

        from xce import logs
        from xce.controller import statedir

        try:
            logs.configure("controller", log_level, log_format or None)
        except ValueError as exc:
            print(f"xce controller: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
        if advertise_url:
            from xce.controller.follow import parse_urls

            try:
                (advertise_url,) = parse_urls(advertise_url, "--advertise-url")
            except ValueError as exc:
                print(f"xce controller: {exc}", file=sys.stderr)
                raise typer.Exit(2) from None
        from xce.config.loader import ConfigError
        from xce.controller.server import serve
        from xce.controller.service import Settings
        from sqlalchemy.exc import SQLAlchemyError

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
            raise typer.Exit(1) from None
        except (RuntimeError, StoreURLError, OSError) as exc:
            print(f"xce controller: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        except SQLAlchemyError as exc:
            print(f"xce controller: cannot use the database: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None


def _masked(url: str) -> str:
    """A database URL fit for a message: the password replaced by ***."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is reported elsewhere
        return url
