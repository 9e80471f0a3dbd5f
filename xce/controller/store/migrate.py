"""Bringing a database to the current schema with Alembic, from code.

The migration scripts ship inside the package, so a controller upgrades its own store at
start-up wherever it is installed; no ``alembic.ini`` is involved. To write a new migration::

    .venv/bin/python -m xce.controller.store.migrate revision "add the foo column"
"""

from __future__ import annotations

import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine) -> None:
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")


def _main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "revision":
        cfg = alembic_config()
        command.revision(cfg, message=argv[1])
    else:
        print("usage: python -m xce.controller.store.migrate revision MESSAGE", file=sys.stderr)
        raise SystemExit(2)


if __name__ == "__main__":
    _main(sys.argv[1:])
