"""Bringing a database to the current schema with Alembic, from code, and only when asked.

A controller never changes an existing database's schema: one that finds an older schema refuses
to start and says to run ``xceadmin db upgrade`` (after a backup, with every controller stopped);
one that finds a newer schema (a downgrade of the software) refuses too. The one exception is a
database with no XCE tables at all: there is nothing to migrate and nothing to lose, so the first
controller (or ``xce up``) creates the current schema in it.

Migrations run under a lock so that two controllers starting on the same new PostgreSQL database
do not both create it: a transaction-level advisory lock keyed on the schema name (advisory locks
are per database, and several XCE clusters may live in different schemas of one database).

The migration scripts ship inside the package; no ``alembic.ini`` is involved. To write one::

    .venv/bin/python -m xce.controller.store.migrate revision "add the foo column"
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).with_name("migrations")
log = logging.getLogger("xce.controller")


class SchemaError(RuntimeError):
    """The database's schema is not the one this XCE uses; the message says what to do."""


@dataclass(frozen=True)
class Revision:
    current: str | None
    head: str

    @property
    def at_head(self) -> bool:
        return self.current == self.head


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head() -> str:
    return _scripts().get_current_head()


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(hashtext('xce.migrate.' || coalesce(current_schema(), '')))")


def _current(conn: Connection) -> str | None:
    return MigrationContext.configure(conn).get_current_revision()


def revision(engine: Engine) -> Revision:
    with engine.connect() as conn:
        return Revision(_current(conn), head())


def _is_empty(conn: Connection) -> bool:
    names = set(sa.inspect(conn).get_table_names())
    return "alembic_version" not in names and "jobs" not in names


def upgrade(engine: Engine) -> Revision:
    """Bring the schema to the newest revision; returns the revision it was at before."""
    with engine.begin() as conn:
        _lock(conn)
        before = _current(conn)
        command.upgrade(alembic_config(conn), "head")
    return Revision(before, head())


def ensure_current(engine: Engine, upgrade_hint: str) -> Revision:
    """Create the schema in an empty database; refuse an older or newer one.

    ``upgrade_hint`` is the command that upgrades this database (``xceadmin db upgrade --db ...``),
    quoted in the refusal.
    """
    target = head()
    with engine.begin() as conn:
        _lock(conn)
        current = _current(conn)
        if current is None:
            if not _is_empty(conn):
                raise SchemaError("the database has XCE tables but no schema revision (alembic_version): it is not "
                                  "a database this XCE created, or it was damaged; restore it from a backup")
            command.upgrade(alembic_config(conn), "head")
            log.warning("new database: created the XCE schema (revision %s)", target)
            return Revision(None, target)
    if current == target:
        return Revision(current, target)
    try:
        known = _scripts().get_revision(current) is not None
    except Exception:  # alembic raises for ids it has never heard of
        known = False
    if known:
        raise SchemaError(f"the database schema is at revision {current}, this XCE needs {target}: back up the "
                          f"database, stop every controller, then run `{upgrade_hint}`")
    raise SchemaError(f"the database schema is at revision {current}, which this XCE (newest revision {target}) does "
                      f"not know: it was upgraded by a newer XCE; run that version, or restore a backup")


def _main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "revision":
        cfg = alembic_config()
        command.revision(cfg, message=argv[1])
    else:
        print("usage: python -m xce.controller.store.migrate revision MESSAGE", file=sys.stderr)
        raise SystemExit(2)


if __name__ == "__main__":
    _main(sys.argv[1:])
