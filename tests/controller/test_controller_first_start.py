"""A controller stopped during its very first start (SIGTERM, SIGKILL) at any step of creating the
schema leaves a store the next start accepts, on SQLite and on PostgreSQL. It once left 9 of 14
tables and an empty ``alembic_version`` on SQLite, refused by every later start as damaged.

The stop is made at chosen statements of the migration run (a hook only the test sets), not after a
chosen delay, so each point is exercised on any machine, however slow or fast."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import nullcontext

import pytest
import sqlalchemy as sa
from pgschema import fresh_schema

from xce.client import statedir
from xce.client.launch import start_controller
from xce.controller.store import engine as store_engine, migrate
from xce.controller.store.schema import metadata

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Statements of a first start's migration run (61 on SQLite, 58 on PostgreSQL) at which it is
#: stopped: 20 points from the first table to the last revision's.
POINTS = [2 + i * 54 // 19 for i in range(20)]


def _first_start_stopped(state_dir, db: str | None, at: int, sig: signal.Signals) -> None:
    statedir.ensure(state_dir)
    args = [sys.executable, "-m", "xce.cli.main", "controller", "--state-dir", str(state_dir), "--port", "0"]
    env = dict(os.environ, **{migrate.STOP_AT_ENV: f"{at}:{sig.name}"})
    with open(state_dir / "controller.log", "ab") as log:
        proc = subprocess.run(args + (["--db", db] if db else []), env=env, stdout=log, stderr=log, timeout=120)
    # it died of the signal where it was sent: the point was exercised, not missed
    assert proc.returncode == -sig, (at, sig, proc.returncode, (state_dir / "controller.log").read_text()[-2000:])


def _schema_is_whole(url: str) -> None:
    engine = store_engine.open_engine(url)
    try:
        assert migrate.ensure_current(engine, "xceadmin db upgrade").current in (None, migrate.head())
        with engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) == set(metadata.tables) | {"alembic_version"}
            assert migrate.revision(engine).at_head
    finally:
        engine.dispose()


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_a_first_start_stopped_at_any_step_leaves_a_store_the_next_start_accepts(tmp_path, store):
    for i, at in enumerate(POINTS):
        sig = (signal.SIGTERM, signal.SIGKILL)[i % 2]
        sd = tmp_path / f"s{at}"
        with fresh_schema() if store == "postgresql" else nullcontext() as db:
            _first_start_stopped(sd, db, at, sig)
            url = db or store_engine.normalize_url(None, statedir.sqlite_path(sd))
            if i == len(POINTS) - 1:  # the last: a whole controller starts on it and serves
                ctl = start_controller(sd, db=db, timeout=60)
                try:
                    assert ctl.token("admin")
                finally:
                    assert ctl.stop() == 0
            _schema_is_whole(url)
