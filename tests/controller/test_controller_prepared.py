"""Prepared statements (xce.controller.store.prepared) give what ``Connection.execute`` gives, on
SQLite and PostgreSQL alike: the same rows with the same Python types, updates of exactly the
columns given, ``IN`` lists of any length, the writes of a transaction kept or rolled back with it,
and the driver's errors as SQLAlchemy's."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from xce.controller.store import engine as store_engine, migrate
from xce.controller.store.prepared import WROTE, Prepared, note_writes
from xce.controller.store.schema import jobs

SELECT = Prepared(sa.select(jobs).where(jobs.c.id == sa.bindparam("jid")))
SELECT_MANY = Prepared(sa.select(jobs.c.id, jobs.c.state).where(jobs.c.id.in_(sa.bindparam("ids", expanding=True)))
                       .order_by(jobs.c.id), "ids")
UPDATE = Prepared(jobs.update().where(jobs.c.id == sa.bindparam("jid")))
INSERT = Prepared(jobs.insert())


def _job(jid: int, **kw) -> dict:
    row = {"id": jid, "user": "ann", "queue": "normal", "project": "default", "job_type": "", "priority": 0,
           "state": "PEND", "tasks": 1, "request": "", "sched_request": "", "command": '["true"]', "submit_time": 1,
           "rerunnable": jid % 2 == 0}
    row.update(kw)
    return row


@pytest.fixture
def conn(tmp_path, db_url):
    engine = store_engine.open_engine(store_engine.normalize_url(db_url, tmp_path / "x.db"))
    migrate.upgrade(engine)
    c = engine.connect()
    note_writes(c)
    yield c
    c.close()
    engine.dispose()


def test_rows_are_what_sqlalchemy_returns(conn):
    with conn.begin():
        INSERT.executemany(conn, [_job(j) for j in range(1, 6)])
    for jid in (1, 2):
        mine = SELECT.first(conn, {"jid": jid})
        theirs = dict(conn.execute(sa.select(jobs).where(jobs.c.id == jid)).mappings().one())
        assert mine == theirs
        assert type(mine["rerunnable"]) is bool and mine["rerunnable"] is (jid % 2 == 0)
    assert SELECT.first(conn, {"jid": 99}) is None
    for ids in ([3], [5, 1, 4], list(range(1, 6)), []):
        assert SELECT_MANY.rows(conn, {"ids": ids}) == [{"id": j, "state": "PEND"} for j in sorted(ids)]


def test_an_update_sets_exactly_the_columns_it_is_given(conn):
    with conn.begin():
        INSERT.executemany(conn, [_job(1), _job(2)])
        assert UPDATE.execute(conn, {"jid": 1, "state": "RUN", "head_host": "h1"}).rowcount == 1
        assert UPDATE.execute(conn, {"jid": 2, "reason": "other columns, another statement"}).rowcount == 1
        assert UPDATE.execute(conn, {"jid": 9, "state": "RUN"}).rowcount == 0
    one, two = SELECT.first(conn, {"jid": 1}), SELECT.first(conn, {"jid": 2})
    assert (one["state"], one["head_host"], one["reason"]) == ("RUN", "h1", None)
    assert (two["state"], two["head_host"], two["reason"]) == ("PEND", None, "other columns, another statement")


def test_writes_belong_to_the_transaction_and_are_noted(conn):
    conn.info[WROTE] = False
    with conn.begin():
        SELECT.first(conn, {"jid": 1})
        assert not conn.info[WROTE]
        INSERT.executemany(conn, [_job(1)])
        assert conn.info[WROTE]
    with pytest.raises(RuntimeError):
        with conn.begin():
            UPDATE.execute(conn, {"jid": 1, "state": "RUN"})
            raise RuntimeError("the transaction fails after the update")
    assert SELECT.first(conn, {"jid": 1})["state"] == "PEND"


def test_the_driver_s_errors_are_sqlalchemy_s(conn):
    with conn.begin():
        INSERT.executemany(conn, [_job(1)])
    with pytest.raises(sa.exc.IntegrityError):
        with conn.begin():
            INSERT.executemany(conn, [_job(1)])  # the same primary key
    with conn.begin():  # the connection is still good
        assert SELECT.first(conn, {"jid": 1})["id"] == 1
