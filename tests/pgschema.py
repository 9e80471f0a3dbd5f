"""PostgreSQL for tests: the shared server, and a fresh schema per test (never the shared objects)."""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Iterator

import pytest
import sqlalchemy as sa

PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def pg_engine() -> sa.engine.Engine:
    engine = sa.create_engine(PG_SERVER)
    try:
        with engine.connect() as c:
            c.exec_driver_sql("select 1")
    except Exception as exc:  # the message must say what is missing, not just that something failed
        pytest.fail(f"PostgreSQL is required for the store tests at 127.0.0.1:5432 (trust auth, database 'test', "
                    f"user 'postgres'); it is not reachable: {exc}", pytrace=False)
    return engine


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A URL whose search_path is a new schema, dropped afterwards (with everything in it)."""
    engine = pg_engine()
    schema = f"xce_t_{uuid.uuid4().hex[:12]}"
    with engine.begin() as c:
        c.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as c:
            c.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()
