"""``xce controller``: run the controller service in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xce.cli.spec import examples_epilog


def register(app: typer.Typer) -> None:
    @app.command(help="Run the controller (REST API, store, event log) until interrupted.",
                 epilog=examples_epilog("xce controller --config examples/laptop.toml",
                                        "xce controller --db postgresql://xce@db/xce --port 6820"))
    def controller(
        host: Annotated[str, typer.Option(help="Address to bind; loopback by default.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port to bind; 0 picks a free one (see controller.json).")] = 0,
        state_dir: Annotated[str | None, typer.Option(help="State directory [env XCE_STATE_DIR; ~/.xce]",
                                                      show_default=False)] = None,
        db: Annotated[str | None, typer.Option(help="Database URL (postgresql://...); default: "
                                               "SQLite file xce.db in the state directory.", show_default=False)] = None,
        config: Annotated[Path | None, typer.Option(help="Cluster configuration (TOML).", show_default=False)] = None,
        worker_timeout: Annotated[float, typer.Option(help="Seconds of silence before a worker is unavailable "
                                                      "and its jobs are lost.", min=0.1)] = 30.0,
        event_retention: Annotated[int, typer.Option(help="Events kept in the scheduler feed.", min=1000)] = 200_000,
        log_level: Annotated[str, typer.Option(help="Logging level.")] = "WARNING",
        single_user: Annotated[str | None, typer.Option(help="A personal cluster whose workers run every job as "
                                                        "USER: serve only USER and the admin token (what `xce up` "
                                                        "does without --multi-user).", metavar="USER",
                                                        show_default=False)] = None,
    ) -> None:
        import logging
        import sys

        from xce.controller import statedir

        logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
        from xce.config.loader import ConfigError
        from xce.controller.server import serve
        from xce.controller.service import Settings
        from sqlalchemy.exc import SQLAlchemyError

        from xce.controller.store.engine import StoreURLError

        settings = Settings(state_dir=statedir.resolve(state_dir), db=db, config_path=config,
                            worker_timeout=worker_timeout, event_retention=event_retention, host=host, port=port,
                            single_user=single_user)
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
