"""Which of several controllers sharing one PostgreSQL database leads, and the proof of it.

The controller's consistency rests on a single writer (see :mod:`xce.controller.service`):
in-memory id counters, and event ``seq`` order equal to commit order. With several controllers
that property is kept by a **lease with a fencing term**, one row of the ``leadership`` table:

* Taking over is ``UPDATE leadership SET term = term + 1, holder = me, expires = now + ttl``,
  allowed only once the lease has expired (on the *database's* clock, so controllers' clocks do
  not matter). The new leader then reloads its counters from the database.
* The leader renews the lease every ``ttl / 4`` seconds while it holds the same term.
* The **fence**: every transaction of the leader starts with ``SELECT ... FOR SHARE`` of the lease
  row and checks that the term is still its own. The takeover's ``UPDATE`` needs the row
  exclusively, so a transaction of the old leader either committed before the takeover (and the
  new leader's reload sees it) or sees the new term and rolls back. A leader that was paused (a
  SIGSTOP, a VM freeze) past its lease therefore cannot write after another took over, whatever
  its own clock says; its next transaction, or its next renewal, tells it to step down.
* A leader paused *inside* a transaction would hold the row: the session setting
  ``idle_in_transaction_session_timeout`` makes PostgreSQL end that session, which releases it.
  That setting does not cover every way a frozen process holds a session (PostgreSQL blocked
  writing an answer the frozen process does not read is "active", not idle), so a follower that
  finds the lease expired and its row still locked ends the old holder's sessions itself
  (``pg_terminate_backend``, found by their ``application_name``,
  :func:`xce.controller.store.engine.session_name`): their transactions roll back, which is the
  fence made certain, and the takeover goes ahead in the same look. Takeover is therefore bounded
  by the lease plus one look whatever state the old leader is in.

Timing: a follower looks at the lease every ``ttl / 4`` seconds, so after the leader dies the
lease runs out within ``ttl`` and a follower takes over at most ``ttl / 4`` later (3.75 s with
the default 3 s). A controller restarted after a crash (same host and state directory, the old
process gone) takes over from its dead predecessor at once. A leader that stops cleanly gives the
lease up, so a follower takes over at its next look.

SQLite has a single controller by construction (the state directory's lock): it always leads and
its fence costs nothing (:class:`SoloLease`).
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError

from xce.controller.store.schema import leadership
from xce.procs import pid_alive

if TYPE_CHECKING:
    from xce.controller.service import Controller

log = logging.getLogger("xce.controller")

#: Default lease length: takeover within ttl + ttl/4 of the leader's death.
DEFAULT_TTL_S = 3.0
#: How long a takeover waits for the lease row when the leader is inside a transaction.
ACQUIRE_LOCK_TIMEOUT_MS = 200
#: How long past its expiry a lease must be before its holder's sessions are ended to take it (a
#: leader a little late with its renewal is not frozen).
FENCE_GRACE_US = 500_000
_NOW_US = sa.literal_column("(extract(epoch from clock_timestamp()) * 1000000)::bigint")


class NotLeader(Exception):
    """This controller does not lead (any more); ``leader_url`` says where the leader is, if known."""

    def __init__(self, message: str, leader_url: str | None = None) -> None:
        super().__init__(message)
        self.leader_url = leader_url


@dataclass(frozen=True)
class Identity:
    """Who a controller is, as the lease row records it."""

    holder: str
    host: str
    pid: int
    state_dir: str
    url: str

    @classmethod
    def this_process(cls, url: str, state_dir: str) -> "Identity":
        host = socket.gethostname()
        return cls(f"{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}", host, os.getpid(), state_dir, url)


@dataclass(frozen=True)
class LeaseInfo:
    term: int
    holder: str
    host: str
    pid: int
    state_dir: str
    url: str
    since_us: int
    expires_us: int
    now_us: int  # the database's clock when this was read

    @property
    def expired(self) -> bool:
        return self.expires_us <= self.now_us

    @property
    def remaining_s(self) -> float:
        return max(0.0, (self.expires_us - self.now_us) / 1e6)


class Lease:
    """The PostgreSQL lease. Every method runs its own short transaction on ``conn`` except
    :meth:`fence`, which runs inside the caller's."""

    shared = True

    def __init__(self, me: Identity, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.me = me
        self.ttl_us = int(ttl_s * 1e6)
        self.term: int | None = None

    def read(self, conn: Connection) -> LeaseInfo | None:
        with conn.begin():
            row = conn.execute(sa.select(leadership, _NOW_US.label("now")).where(leadership.c.id == 1)).mappings().first()
        return _info(row)

    def try_acquire(self, conn: Connection) -> LeaseInfo | None:
        """Take the lease if it is free, expired, ours, or held by a dead process of this host; an
        expired lease whose row its frozen holder still locks is taken after ending that holder's
        sessions (:meth:`fence_out`)."""
        try:
            return self._acquire(conn)
        except DBAPIError as exc:
            if exc.connection_invalidated or not _lock_timeout(exc):
                raise
        if not self.fence_out(conn):
            return None
        try:
            return self._acquire(conn)
        except DBAPIError as exc:
            if exc.connection_invalidated or not _lock_timeout(exc):
                raise
            return None

    def fence_out(self, conn: Connection) -> int:
        """End the sessions of the expired lease's holder (not ours): the number ended. Whatever they
        were doing rolls back, so nothing the old leader does can commit after the takeover."""
        info = self.read(conn)
        if info is None or info.holder == self.me.holder or info.expires_us + FENCE_GRACE_US > info.now_us:
            return 0
        from xce.controller.store.engine import session_name

        with conn.begin():
            ended = conn.execute(sa.text(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 2000)) FROM pg_stat_activity "
                "WHERE application_name = :app AND pid <> pg_backend_pid()"),
                {"app": session_name(info.holder)}).scalar() or 0
        if ended:
            log.warning("ended %d database session(s) of controller %s, whose lease ran out %.1f s ago while it "
                        "still held the lease row (a frozen process): taking over", ended, info.url or info.holder,
                        (info.now_us - info.expires_us) / 1e6)
        return ended

    def _acquire(self, conn: Connection) -> LeaseInfo | None:
        try:
            with conn.begin():
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{ACQUIRE_LOCK_TIMEOUT_MS}ms'")
                row = conn.execute(sa.select(leadership, _NOW_US.label("now")).where(leadership.c.id == 1)
                                   .with_for_update()).mappings().first()
                old = _info(row)
                values = {"holder": self.me.holder, "host": self.me.host, "pid": self.me.pid, "url": self.me.url,
                          "state_dir": self.me.state_dir, "since": _NOW_US, "expires": _NOW_US + self.ttl_us}
                if old is None:
                    term = 1
                    conn.execute(sa.insert(leadership).values(id=1, term=term, **values))
                elif old.expired or old.holder == self.me.holder or self.dead_local(old):
                    term = old.term + 1
                    conn.execute(sa.update(leadership).where(leadership.c.id == 1).values(term=term, **values))
                else:
                    return None
        except (IntegrityError, DBAPIError) as exc:
            if isinstance(exc, DBAPIError) and (exc.connection_invalidated or _lock_timeout(exc)):
                raise
            return None  # another controller is taking over
        self.term = term
        return old or LeaseInfo(0, "", "", 0, "", "", 0, 0, 0)

    def dead_local(self, info: LeaseInfo) -> bool:
        """The lease holder was this very controller before a crash (same host and state directory) and
        its process is gone: nobody else can be writing, so the restart need not wait for the lease."""
        return (info.host == self.me.host and info.state_dir == self.me.state_dir and info.pid != self.me.pid
                and not pid_alive(info.pid))

    def renew(self, conn: Connection) -> bool:
        """Extend the lease; False when another controller took it (we must stop writing)."""
        with conn.begin():
            n = conn.execute(sa.update(leadership).where(leadership.c.id == 1, leadership.c.term == self.term,
                                                         leadership.c.holder == self.me.holder)
                             .values(expires=_NOW_US + self.ttl_us)).rowcount
        return n == 1

    def release(self, conn: Connection) -> None:
        """Give the lease up now (a clean stop): a follower takes over at its next look."""
        if self.term is None:
            return
        with conn.begin():
            conn.execute(sa.update(leadership).where(leadership.c.id == 1, leadership.c.term == self.term,
                                                     leadership.c.holder == self.me.holder)
                         .values(expires=_NOW_US - 1))
        self.term = None

    def fence(self, conn: Connection) -> None:
        """Inside a transaction: prove that we still lead, and keep the lease row from being taken
        over until this transaction ends."""
        row = conn.execute(sa.select(leadership.c.term, leadership.c.holder, leadership.c.url)
                           .where(leadership.c.id == 1).with_for_update(read=True)).first()
        if row is None or self.term is None or row.term != self.term or row.holder != self.me.holder:
            raise NotLeader("this controller no longer leads" + (f"; the leader is at {row.url}" if row else ""),
                            row.url if row else None)


class SoloLease:
    """SQLite: one controller per store, guarded by the state directory's lock; it always leads."""

    shared = False

    def __init__(self, me: Identity) -> None:
        self.me = me
        self.term: int | None = None

    def read(self, conn: Connection) -> LeaseInfo | None:
        now = time.time_ns() // 1000
        return LeaseInfo(1, self.me.holder, self.me.host, self.me.pid, self.me.state_dir, self.me.url, now,
                         now + 10**12, now)

    def try_acquire(self, conn: Connection) -> LeaseInfo | None:
        self.term = 1
        return LeaseInfo(0, "", "", 0, "", "", 0, 0, 0)

    def renew(self, conn: Connection) -> bool:
        return True

    def release(self, conn: Connection) -> None:
        self.term = None

    def fence(self, conn: Connection) -> None:
        return None


def _lock_timeout(exc: DBAPIError) -> bool:
    """The lease row is locked by another session (SQLSTATE 55P03, lock_not_available)."""
    return getattr(exc.orig, "sqlstate", None) == "55P03"


def for_dialect(dialect: str, me: Identity, ttl_s: float) -> Lease | SoloLease:
    return Lease(me, ttl_s) if dialect == "postgresql" else SoloLease(me)


def _info(row) -> LeaseInfo | None:
    if row is None:
        return None
    return LeaseInfo(row["term"], row["holder"], row["host"], row["pid"], row["state_dir"], row["url"], row["since"],
                     row["expires"], row["now"])


class Watch:
    """The leadership loop (a tick every ``ttl / 4`` seconds, on the controller's event loop): the
    leader renews its lease, a follower reads it and takes it when it is free."""

    def __init__(self, ctl: "Controller") -> None:
        self.ctl = ctl
        self._last_trouble = 0.0

    def tick(self) -> None:
        ctl = self.ctl
        lease, conn = ctl.lease, ctl.conn
        if lease is None or conn is None or not lease.shared:
            return
        try:
            if ctl.leader:
                if not lease.renew(conn):
                    info = lease.read(conn)
                    ctl.step_down(f"controller {info.url or info.holder} took over (term {info.term})" if info
                                  else "the lease row disappeared")
                return
            info = lease.read(conn)
            ctl.saw_lease(info)
            if info is None or info.expired or info.holder == lease.me.holder or lease.dead_local(info):
                ctl.try_lead()
            if not ctl.leader:  # the tokens the leader issues and revokes, for the few calls a follower answers
                with conn.begin():
                    ctl.tokens.load(conn)
        except sa.exc.SQLAlchemyError as exc:
            self._trouble(exc)

    def _trouble(self, exc: Exception) -> None:
        """The database did not answer: say so (at most every 10 s); safety does not depend on it."""
        now = time.monotonic()
        if now - self._last_trouble >= 10.0:
            self._last_trouble = now
            log.warning("cannot reach the database to %s the leadership lease: %s",
                        "renew" if self.ctl.leader else "read", str(exc).splitlines()[0])
        try:
            self.ctl.conn.rollback()
        except sa.exc.SQLAlchemyError:
            pass
