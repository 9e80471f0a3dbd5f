"""Statements every job runs, compiled once per database and run on the driver's own cursor.

A job's dispatch, its start delivery and its end report run about a dozen statements in the
controller. Through SQLAlchemy's ``Connection.execute`` each one, even built once, costs 70-150 µs
of Python around the driver (a cache key, parameter processing, result metadata for every
column): four to five times what SQLite needs to run it, and most of the controller's time per job
after the HTTP layer. A :class:`Prepared` statement is still written with SQLAlchemy (one schema,
both engines) but compiled once per dialect and set of parameter names, then handed to the DBAPI
cursor of the controller's connection, inside the same transaction. Results come back as dicts by
column name, with SQLAlchemy's own result conversions where a dialect needs one (SQLite returns
booleans as 0/1), and driver errors are raised as the same ``sqlalchemy.exc.DBAPIError`` subclasses
``Connection.execute`` raises, so callers cannot tell the difference.

Everything else (rare statements, schema, migrations) goes through SQLAlchemy as usual.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

#: Set in ``Connection.info`` by every statement that may change rows (see :func:`note_writes`).
WROTE = "xce.wrote"

_Compiled = tuple[str, tuple[str, ...] | None, dict[str, Any], list[tuple[str, Callable[[Any], Any] | None]]]


class Prepared:
    """One statement; ``expanding`` names its one ``IN`` list parameter (``bindparam(expanding=True)``).

    An INSERT or UPDATE sets the columns named by its parameters, so it is compiled once per set
    of parameter names, as SQLAlchemy itself does."""

    __slots__ = ("stmt", "expanding", "writes", "_cache")

    def __init__(self, stmt: Any, expanding: str | None = None) -> None:
        self.stmt = stmt
        self.expanding = expanding
        self.writes = bool(getattr(stmt, "is_dml", False))
        self._cache: dict[tuple, _Compiled] = {}

    def _compiled(self, dialect: sa.engine.Dialect, params: dict[str, Any]) -> _Compiled:
        width = len(params[self.expanding]) if self.expanding else 0
        key = (dialect.name, tuple(params), width) if self.writes else (dialect.name, width)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        c = self.stmt.compile(dialect=dialect, column_keys=list(params) if self.writes else None)
        sql, order = c.string, tuple(c.positiontup) if c.positional else None
        defaults = {name: b.effective_value for name, b in c.binds.items() if name not in params}
        if self.expanding:
            state = c.construct_expanded_state({**defaults, **params})
            sql = state.statement
            order = tuple(state.positiontup) if c.positional else None
        # Bound values need no conversion here: the statements bind integers, text and None only.
        columns = [(col.key, col.type.dialect_impl(dialect).result_processor(dialect, None))
                   for col in getattr(self.stmt, "selected_columns", ())]
        hit = self._cache[key] = (sql, order, defaults, columns)
        return hit

    def _bind(self, compiled: _Compiled, params: dict[str, Any]) -> Any:
        sql, order, defaults, _ = compiled
        if self.expanding:
            values = params[self.expanding]
            params = {**defaults, **{k: v for k, v in params.items() if k != self.expanding},
                      **{f"{self.expanding}_{i}": v for i, v in enumerate(values, 1)}}
        elif defaults:
            params = {**defaults, **params}
        return tuple(params[name] for name in order) if order is not None else params

    def execute(self, conn: Connection, params: dict[str, Any] | None = None) -> Any:
        """Run it; the driver's cursor (its ``rowcount``, or rows for :meth:`rows` to read)."""
        params = params or {}
        dialect = conn.dialect
        compiled = self._compiled(dialect, params)
        bound = self._bind(compiled, params)
        cursor = conn.connection.dbapi_connection.cursor()
        try:
            cursor.execute(compiled[0], bound)
        except dialect.loaded_dbapi.Error as exc:
            _raise(conn, compiled[0], bound, exc, cursor)
        if self.writes:
            conn.info[WROTE] = True
        return cursor

    def executemany(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """One INSERT for many rows alike (the buffered history, events, actions of a transaction)."""
        if not rows:
            return
        dialect = conn.dialect
        compiled = self._compiled(dialect, rows[0])
        bound = [self._bind(compiled, r) for r in rows]
        cursor = conn.connection.dbapi_connection.cursor()
        try:
            cursor.executemany(compiled[0], bound)
        except dialect.loaded_dbapi.Error as exc:
            _raise(conn, compiled[0], bound, exc, cursor)
        finally:
            cursor.close()
        conn.info[WROTE] = True

    def rows(self, conn: Connection, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """A SELECT's rows as dicts by column name."""
        params = params or {}
        cursor = self.execute(conn, params)
        columns = self._compiled(conn.dialect, params)[3]
        names = [name for name, _ in columns]
        convert = [(i, fn) for i, (_, fn) in enumerate(columns) if fn is not None]
        out = []
        for row in cursor.fetchall():
            if convert:
                row = list(row)
                for i, fn in convert:
                    row[i] = fn(row[i])
            out.append(dict(zip(names, row, strict=True)))
        cursor.close()
        return out

    def first(self, conn: Connection, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        found = self.rows(conn, params)
        return found[0] if found else None

    def tuples(self, conn: Connection, params: dict[str, Any] | None = None) -> Iterable[tuple]:
        """A SELECT's rows as the driver returns them (columns needing no conversion only)."""
        cursor = self.execute(conn, params)
        out = cursor.fetchall()
        cursor.close()
        return out


def note_writes(conn: Connection) -> None:
    """Mark ``conn.info[WROTE]`` for the statements run through SQLAlchemy too, so that a transaction
    can tell whether it changed anything (the controller times only commits that did)."""

    def listener(conn, cursor, statement, parameters, context, executemany) -> None:
        if context is not None and (context.isinsert or context.isupdate or context.isdelete):
            conn.info[WROTE] = True

    sa.event.listen(conn, "after_cursor_execute", listener)


def _raise(conn: Connection, sql: str, params: Any, exc: Exception, cursor: Any) -> None:
    """The error ``Connection.execute`` would have raised; a lost connection is invalidated so that the
    next transaction gets a new one."""
    dialect = conn.dialect
    gone = dialect.is_disconnect(exc, conn.connection.dbapi_connection, cursor)
    if gone:
        conn.invalidate(exc)
    raise sa.exc.DBAPIError.instance(sql, params, exc, dialect.loaded_dbapi.Error,
                                     connection_invalidated=gone, dialect=dialect) from exc
