"""Opening the store: an SQLite file by default, PostgreSQL by URL, one engine per process.

SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit survives the controller being
killed (the WAL is in the OS before ``COMMIT`` returns) and costs no fsync; only a power cut
can lose the last transactions. PostgreSQL URLs are steered to the psycopg (3) driver.

On PostgreSQL every session of a controller ends a transaction left idle for twice the leadership
lease (a controller paused inside one must not keep the lease row, or rows a new leader needs,
locked; see :mod:`xce.controller.ha.leadership`), and waits for a row lock at most a little longer
than that, so that a stuck session is the one that fails, never the new leader's loop forever. A
statement may run for at most :data:`STATEMENT_TIMEOUT_MS`, and TCP keepalives on both ends (and
``tcp_user_timeout``) end a session whose peer vanished (a host that died, a cable pulled) in
seconds rather than the kernel's two hours. A session stuck in a way none of these notice (its
controller frozen while PostgreSQL writes to it) is ended by the next leader, which finds it by
its ``application_name`` (:func:`session_name`).
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine


class StoreURLError(ValueError):
    pass


def normalize_url(db: str | None, sqlite_file: Path) -> str:
    """``None`` means the state directory's SQLite file; ``postgresql://`` gets the psycopg driver."""
    if not db:
        return f"sqlite:///{sqlite_file}"
    for prefix in ("postgresql://", "postgres://", "postgresql+psycopg2://"):
        if db.startswith(prefix):
            return "postgresql+psycopg://" + db[len(prefix):]
    if db.startswith(("postgresql+psycopg://", "sqlite://")):
        return db
    raise StoreURLError(
        f"unsupported database URL {db!r}: expected postgresql://USER@HOST:PORT/DB or sqlite:///PATH"
    )


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA cache_size=-65536")
    cur.close()


#: Longest statement a controller runs (the largest exports take a few seconds with 100,000 jobs).
STATEMENT_TIMEOUT_MS = 60_000
#: Client-side keepalives (libpq's names): a silent server is noticed within about 5 + 3 * 2 s.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}


def session_name(holder: str) -> str:
    """The ``application_name`` of every session of the controller ``holder`` (a lease holder
    ``host:pid:nonce``): short enough for PostgreSQL's 63 bytes, unique by its nonce."""
    return "xce-controller:" + ":".join(holder.rsplit(":", 2)[-2:])


def _postgres_session(idle_ms: int):
    def configure(dbapi_conn, _record) -> None:
        autocommit = dbapi_conn.autocommit
        dbapi_conn.autocommit = True
        with dbapi_conn.cursor() as cur:
            cur.execute(f"SET idle_in_transaction_session_timeout = {idle_ms}")
            cur.execute(f"SET lock_timeout = {idle_ms + 2000}")
            cur.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
            cur.execute("SET tcp_keepalives_idle = 5")
            cur.execute("SET tcp_keepalives_interval = 2")
            cur.execute("SET tcp_keepalives_count = 3")
            cur.execute("SET tcp_user_timeout = 15000")
        dbapi_conn.autocommit = autocommit

    return configure


def open_engine(url: str, lease_s: float = 3.0, holder: str | None = None) -> Engine:
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"check_same_thread": False})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    args: dict = dict(KEEPALIVES, connect_timeout=10)
    if holder:
        args["application_name"] = session_name(holder)
    engine = sa.create_engine(url, pool_pre_ping=True, connect_args=args)
    sa.event.listen(engine, "connect", _postgres_session(max(1000, int(2 * lease_s * 1000))))
    return engine
