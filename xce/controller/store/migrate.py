"""Bringing a database to the current schema with Alembic, from code, and only when asked.

A controller never changes an existing database's schema: one that finds an older schema refuses
to start and says to run ``xceadmin db upgrade`` (after a backup, with every controller stopped);
one that finds a newer schema (a downgrade of the software) refuses too. The one exception is a
database with no XCE tables at all: there is nothing to migrate and nothing to lose, so the first
controller (or ``xce up``) creates the current schema in it.

Migrations run under a lock so that two controllers starting on the same new PostgreSQL database
do not both create it: a transaction-level advisory lock keyed on the schema name (advisory locks
are per database, and several XCE clusters may live in different schemas of one database).

Every migration run, the first start's creation of the whole schema included, is one transaction
on both stores: a controller stopped part-way (SIGTERM, SIGKILL, a power cut) leaves the database
as it found it, never with some of the tables and an empty ``alembic_version``, which no later
start could tell from a damaged database. PostgreSQL's DDL is transactional as it is; Python's
sqlite3 driver commits each ``CREATE TABLE`` on its own unless the transaction is begun explicitly,
which :func:`_transaction` does (SQLite's DDL is transactional too).

The migration scripts ship inside the package; no ``alembic.ini`` is involved. To write one::

    .venv/bin/python -m xce.controller.store.migrate revision "add the foo column"
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


#: Tests only: ``N:SIGNAME`` makes the process send itself SIGNAME just before the Nth statement of
#: a migration run, to stop a first start at a chosen step rather than at a moment that may miss it.
STOP_AT_ENV = "XCE_TEST_STOP_MIGRATION_AT"


def _stop_at(conn: Connection) -> None:
    spec = os.environ.get(STOP_AT_ENV)
    if not spec:
        return
    at, _, name = spec.partition(":")
    seen = [0]

    def before(*_args) -> None:
        seen[0] += 1
        if seen[0] == int(at):
            os.kill(os.getpid(), getattr(signal, name))

    sa.event.listen(conn, "before_cursor_execute", before)


@contextmanager
def _transaction(engine: Engine) -> Iterator[Connection]:
    """``engine.begin()``, a real transaction for DDL on SQLite too (see the module's docstring)."""
    with engine.connect() as conn:
        raw = conn.connection.driver_connection if conn.dialect.name == "sqlite" else None
        if raw is not None:
            raw.isolation_level = None  # the driver begins and commits nothing by itself ...
        try:
            _stop_at(conn)
            if raw is not None:
                conn.exec_driver_sql("BEGIN IMMEDIATE")  # ... so this one transaction holds it all
            yield conn
            conn.commit()  # (an exception instead: closing the connection rolls it all back)
        finally:
            if raw is not None:
                raw.isolation_level = ""  # the driver's default again, for the pool's next user


def upgrade(engine: Engine) -> Revision:
    """Bring the schema to the newest revision; returns the revision it was at before."""
    with _transaction(engine) as conn:
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
    with _transaction(engine) as conn:
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
