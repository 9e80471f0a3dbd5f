"""What a follower answers: every API call is sent to the leader.

A follower holds no authoritative state in memory, so rather than answer from the database with
a picture that may lag, it redirects: ``307 Temporary Redirect`` (the method and body are kept)
with ``Location`` on the leader and the leader's address in ``X-XCE-Leader``. While no controller
leads (the leader died and its lease has not run out yet) it answers ``503`` with an empty
``X-XCE-Leader`` and ``Retry-After``. Clients (:mod:`xce.client.follow`) recognise both by the
header and try again; a plain HTTP client sees an ordinary redirect.

``/v1/status`` (this controller's view of the cluster, for ``xceadmin check``), ``/metrics`` and
the API documentation are answered by every controller.
"""

from __future__ import annotations

import json
import time

import sqlalchemy as sa

from xce.client.follow import LEADER_HEADER
from xce.controller.service import Controller

EXEMPT = ("/v1/status", "/metrics", "/docs", "/redoc", "/openapi.json")


def leader_url(ctl: Controller) -> str | None:
    """The leader's address while its lease is live.

    The leadership loop's last reading answers while it is live; when it is missing or has run out
    (the loop has not ticked yet, or ran late), the lease is read again before the caller is told
    that nobody leads."""
    url = _live_url(ctl.lease_info, ctl.lease_read_mono)
    if url is None and ctl.lease is not None and ctl.conn is not None:
        try:
            info = ctl.lease.read(ctl.conn)
        except sa.exc.SQLAlchemyError:
            return None
        ctl.saw_lease(info)
        url = _live_url(info, ctl.lease_read_mono)
    return url


def _live_url(info, read_mono: float) -> str | None:
    if info is None or not info.url or info.expired:
        return None
    if time.monotonic() - read_mono > info.remaining_s:
        return None  # it has run out since it was read
    return info.url


def not_leader_body(leader: str | None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    if leader:
        detail = f"this controller is a follower; the leader is at {leader}"
        return 307, [(LEADER_HEADER.encode(), leader.encode())], json.dumps({"detail": detail}).encode()
    detail = "no controller leads at the moment (a takeover is under way); retry in a second"
    return 503, [(LEADER_HEADER.encode(), b""), (b"retry-after", b"1")], json.dumps({"detail": detail}).encode()


class LeaderGate:
    """Pure ASGI middleware in front of every route."""

    def __init__(self, app, ctl: Controller) -> None:
        self.app = app
        self.ctl = ctl

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.ctl.leader or scope["path"].startswith(EXEMPT):
            await self.app(scope, receive, send)
            return
        leader = leader_url(self.ctl)
        status, headers, body = not_leader_body(leader)
        if status == 307:
            query = scope.get("query_string", b"")
            location = leader.rstrip("/") + scope["path"] + ("?" + query.decode("latin-1") if query else "")
            headers.append((b"location", location.encode()))
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
