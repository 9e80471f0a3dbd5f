"""Database trouble to HTTP: ``503`` with ``Retry-After`` and one line, never ``500``.

A killed session, a PostgreSQL restart, a full disk under SQLite, a lock or statement timeout: the
transaction rolled back (the controller reloaded what it keeps in memory, or stepped down), so
nothing was done and the same request, sent again, may well succeed. Clients
(:func:`xce.client.follow.retryable`) retry a 503 with the same idempotency key; a 500 would
tell them the request itself was wrong. A value the store cannot hold stays the caller's mistake
(422, :mod:`xce.controller.web.hygiene`).
"""

from __future__ import annotations

import json
import logging
import time

from fastapi import FastAPI, Request
from fastapi.responses import Response
from sqlalchemy.exc import DataError, DBAPIError, SQLAlchemyError, StatementError

log = logging.getLogger("xce.controller")

#: Seconds a client is asked to wait before it sends the request again.
RETRY_AFTER_S = 1
#: At most one log line per this many seconds while the database stays away.
SAY_EVERY_S = 10.0


def first_line(exc: BaseException) -> str:
    """The driver's own sentence, without SQLAlchemy's statement dump and background link."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return " ".join(text[0].split()) if text else type(orig).__name__


def unavailable(exc: BaseException) -> Response:
    detail = f"the controller's database did not complete the request ({first_line(exc)[:300]}); nothing was " \
             f"changed: retry in {RETRY_AFTER_S} s"
    return Response(json.dumps({"detail": detail}), 503, media_type="application/json",
                    headers={"Retry-After": str(RETRY_AFTER_S)})


def install(app: FastAPI) -> None:
    """After :func:`xce.controller.web.hygiene.install`: its 422 for values the store cannot hold wins."""
    said = [0.0]

    async def handler(request: Request, exc: Exception):
        if isinstance(exc, StatementError) and _too_wide(exc):
            fallback = app.exception_handlers.get(StatementError)
            if fallback is not None:
                return await fallback(request, exc)
        now = time.monotonic()
        if now - said[0] >= SAY_EVERY_S:
            said[0] = now
            log.warning("answering 503: the database failed a request (%s %s): %s", request.method,
                        request.url.path, first_line(exc))
        return unavailable(exc)

    app.add_exception_handler(DBAPIError, handler)
    app.add_exception_handler(SQLAlchemyError, handler)


def _too_wide(exc: StatementError) -> bool:
    orig = getattr(exc, "orig", exc)
    return isinstance(exc, DataError) or isinstance(orig, (OverflowError, ValueError))
