"""One controller's view of the cluster, for ``xceadmin check`` and monitoring (``GET /v1/status``).

Every controller answers it, leader or follower: its own role, the lease as the database holds
it, the database's schema revision, round-trip time and clock. The leader adds what only it
knows: when the scheduler last read the feed and how far behind it is, and each worker's
status and silence. Times are wall-clock nanoseconds of the controller (``time_ns``) and of the
database (``database.time_ns``), so a checker can compare clocks.
"""

from __future__ import annotations

import importlib.metadata
import time
from typing import Any

import sqlalchemy as sa

from xce.controller.service import Controller
from xce.controller.store import migrate

_DB_NOW_US = "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint"


def _version() -> str:
    try:
        return importlib.metadata.version("xce")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _database(ctl: Controller, admin: bool) -> dict[str, Any]:
    engine, conn = ctl.engine, ctl.conn
    assert engine is not None and conn is not None
    out: dict[str, Any] = {"dialect": engine.dialect.name,
                           # where the database lives is the administrators' business
                           "url": engine.url.render_as_string(hide_password=True) if admin else engine.dialect.name}
    try:
        t0 = time.perf_counter()
        with conn.begin():
            if engine.dialect.name == "postgresql":
                out["time_ns"] = int(conn.exec_driver_sql(_DB_NOW_US).scalar()) * 1000
            else:
                conn.exec_driver_sql("SELECT 1").scalar()
                out["time_ns"] = time.time_ns()
        out["latency_ms"] = round((time.perf_counter() - t0) * 1000, 3)
        rev = migrate.revision(engine)
        out.update(revision=rev.current, head=rev.head)
    except sa.exc.SQLAlchemyError as exc:
        out["error"] = str(exc).splitlines()[0]
        try:
            conn.rollback()
        except sa.exc.SQLAlchemyError:
            pass
    return out


def status(ctl: Controller, admin: bool = True) -> dict[str, Any]:
    lease = ctl.lease
    assert lease is not None
    now = time.time_ns()
    me = {"id": lease.me.holder, "url": lease.me.url, "host": lease.me.host, "pid": lease.me.pid,
          "role": "leader" if ctl.leader else "follower", "version": _version(), "time_ns": now,
          "started_ns": ctl.started_ns}
    out: dict[str, Any] = {"controller": me, "database": _database(ctl, admin), "leader": None}
    try:
        info = lease.read(ctl.conn)
    except sa.exc.SQLAlchemyError:
        info = None
    if info is not None and (not info.expired or ctl.leader):
        out["leader"] = {"id": info.holder, "url": info.url, "host": info.host, "pid": info.pid, "term": info.term,
                         "expires_in_s": round(info.remaining_s, 3)}
    if ctl.leader:
        mono = time.monotonic()
        seen = ctl.sched_watch.seen_mono
        out["scheduler"] = {"last_request_age_s": None if seen is None else round(mono - seen, 3),
                            "cursor": ctl.sched_watch.cursor, "last_seq": ctl.last_seq,
                            "lag": max(0, ctl.last_seq - ctl.sched_watch.cursor)}
        out["workers"] = [{"name": n, "status": h.status, "silent_s": round(mono - h.seen_mono, 3)}
                          for n, h in sorted(ctl.hosts.items())]
        out["worker_timeout_s"] = ctl.settings.worker_timeout
    return out
