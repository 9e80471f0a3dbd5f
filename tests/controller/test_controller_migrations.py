"""Explicit migrations: a controller refuses an older (or newer) schema and says what to run;
``xceadmin db current`` / ``upgrade`` do it; a new, empty database is created by the first controller."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from xce.client import statedir
from xce.client.launch import LaunchError, start_controller
from xce.controller.store import engine as store_engine, migrate

pytestmark = [pytest.mark.integration]

HEAD = migrate.head()
#: The revision before the newest: "an older schema" (whatever the newest migration is).
OLDER = ScriptDirectory.from_config(migrate.alembic_config()).get_revision(HEAD).down_revision


def xceadmin(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    return subprocess.run([sys.executable, "-m", "xce.cli.admin", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def at_revision(url: str, rev: str) -> None:
    engine = store_engine.open_engine(url)
    try:
        with engine.begin() as conn:
            command.upgrade(migrate.alembic_config(conn), rev)
    finally:
        engine.dispose()


def where(tmp_path, db_url):
    """(controller --db arguments, xceadmin db arguments, SQLAlchemy URL) for this store."""
    if db_url is None:
        return (), ("--state-dir", str(tmp_path)), store_engine.normalize_url(None, statedir.sqlite_path(tmp_path))
    return (), ("--db", db_url), db_url


def test_an_older_schema_is_refused_until_upgraded(tmp_path, db_url):
    statedir.ensure(tmp_path)
    _, db_args, url = where(tmp_path, db_url)
    at_revision(url, OLDER)

    with pytest.raises(LaunchError) as refused:
        start_controller(tmp_path, db=db_url, timeout=60)
    assert f"the database schema is at revision {OLDER}, this XCE needs {HEAD}" in str(refused.value)
    assert "xceadmin db upgrade " in str(refused.value) and "Traceback" not in str(refused.value)

    cur = xceadmin("db", "current", *db_args, cwd=tmp_path)
    assert cur.returncode == 1 and f"revision {OLDER}; this XCE needs {HEAD}: run `xceadmin db upgrade`" in cur.stdout

    up = xceadmin("db", "upgrade", *db_args, cwd=tmp_path)
    assert up.returncode == 0, up.stderr
    assert f"upgraded from revision {OLDER} to {HEAD}" in up.stdout
    again = xceadmin("db", "upgrade", *db_args, cwd=tmp_path)
    assert again.returncode == 0 and f"already at revision {HEAD}; nothing to do" in again.stdout
    cur = xceadmin("db", "current", *db_args, cwd=tmp_path)
    assert cur.returncode == 0 and f"revision {HEAD} (up to date)" in cur.stdout

    ctl = start_controller(tmp_path, db=db_url)
    try:
        # While it runs, an upgrade is refused: the controller would be migrated under its feet.
        busy = xceadmin("db", "upgrade", *db_args, cwd=tmp_path)
        assert busy.returncode == 1 and "stop every controller first" in busy.stderr
    finally:
        ctl.stop()


def test_a_schema_newer_than_this_xce_is_refused(tmp_path, pg_url):
    at_revision(pg_url, "head")
    engine = sa.create_engine(pg_url)
    with engine.begin() as c:
        c.exec_driver_sql("update alembic_version set version_num = '0099'")
    engine.dispose()
    with pytest.raises(LaunchError) as refused:
        start_controller(tmp_path, db=pg_url, timeout=60)
    assert f"revision 0099, which this XCE (newest revision {HEAD}) does not know" in str(refused.value)


def test_db_commands_say_what_is_wrong_with_their_arguments(tmp_path):
    nothing = xceadmin("db", "current", "--state-dir", str(tmp_path / "none"), cwd=tmp_path)
    assert nothing.returncode == 1 and "does not exist" in nothing.stderr and "Traceback" not in nothing.stderr
    bad = xceadmin("db", "upgrade", "--db", "mysql://x/y", cwd=tmp_path)
    assert bad.returncode == 2 and "unsupported database URL" in bad.stderr


def test_cpu_seconds_stored_before_milliseconds_are_converted(tmp_path, db_url):
    """0013: a finished job's ``cpu_time`` record and its folded usage (seconds) become ``cpu_ms``
    (milliseconds), so ``xce acct`` and drift read old and new jobs alike; downgrading goes back."""
    import json

    statedir.ensure(tmp_path)
    _, _, url = where(tmp_path, db_url)
    at_revision(url, "0011")
    usage = {"last": {"cpu_time": 3, "memory_rss": 5}, "peak": {"cpu_time": 3, "memory_rss": 7},
             "mean": {"cpu_time": 1.5, "memory_rss": 6}, "sum": {"cpu_time": 6, "memory_rss": 12},
             "count": {"cpu_time": 4, "memory_rss": 2}, "samples": 4, "ts": 9,
             "hosts": {"h1": {"cpu_time": 2}, "h2": {"cpu_time": 1}},
             "series": {"t0": 1, "stride": 1, "n": 1, "points": [[0.0, {"cpu_time": 0}], [0.5, {"cpu_time": 3}]]}}
    engine = store_engine.open_engine(url)
    row = {"jobid": 1, "job_type": "", "queue": "normal", "user": "ann", "tasks": 1, "state": "DONE",
           "start_time": 1, "end_time": 2, "run_time": 1, "declared": 0, "samples": 4}
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO jobs (id, \"user\", queue, project, job_type, priority, state, tasks, "
                                 "request, sched_request, command, submit_time, usage) VALUES (1, 'ann', 'normal', "
                                 "'default', '', 0, 'DONE', 1, '', '', '[]', 1, :u)"), {"u": json.dumps(usage)})
            conn.execute(sa.text("INSERT INTO job_accounting (jobid, resource, job_type, queue, \"user\", tasks, "
                                 "state, start_time, end_time, run_time, declared, peak, mean, samples) VALUES "
                                 "(:jobid, :r, :job_type, :queue, :user, :tasks, :state, :start_time, :end_time, "
                                 ":run_time, :declared, :p, :m, :samples)"),
                         [dict(row, r="cpu_time", p=3, m=2), dict(row, r="mem", p=7, m=6)])
        at_revision(url, "0013")
        with engine.connect() as conn:
            got = json.loads(conn.execute(sa.text("SELECT usage FROM jobs WHERE id = 1")).scalar())
            records = dict(((r, (p, m)) for r, p, m in conn.execute(
                sa.text("SELECT resource, peak, mean FROM job_accounting WHERE jobid = 1"))))
        assert records == {"cpu_ms": (3000, 2000), "mem": (7, 6)}
        assert (got["last"], got["peak"]) == ({"cpu_ms": 3000, "memory_rss": 5}, {"cpu_ms": 3000, "memory_rss": 7})
        assert (got["mean"]["cpu_ms"], got["sum"]["cpu_ms"], got["count"]) == (1500, 6000, {"cpu_ms": 4, "memory_rss": 2})
        assert got["hosts"] == {"h1": {"cpu_ms": 2000}, "h2": {"cpu_ms": 1000}}
        assert got["series"]["points"] == [[0.0, {"cpu_ms": 0}], [0.5, {"cpu_ms": 3000}]]
        with engine.begin() as conn:
            command.downgrade(migrate.alembic_config(conn), "0012")
        with engine.connect() as conn:
            back = json.loads(conn.execute(sa.text("SELECT usage FROM jobs WHERE id = 1")).scalar())
            resources = {r for (r,) in conn.execute(sa.text("SELECT resource FROM job_accounting"))}
        assert back["peak"] == usage["peak"] and back["hosts"] == usage["hosts"] and resources == {"cpu_time", "mem"}
    finally:
        engine.dispose()
