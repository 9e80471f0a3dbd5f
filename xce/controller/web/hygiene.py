"""Requests no handler should ever see: NUL characters, bodies that are not UTF-8, and values too
wide for the store.

PostgreSQL refuses a NUL character in any text value and both engines refuse integers wider
than 64 bits, each with an exception that would surface as HTTP 500. No name, path, command or
reason of XCE can contain a NUL (the kernel ends strings there), so a request carrying one, in its
path, its query or anywhere in its JSON body, is refused before routing with a 422 naming where.
Integers are bounded by the request models; :func:`install` adds the last line behind them, so that a
value that still reaches the store is a 422 and the transaction is rolled back, leaving the
connection usable for the next request.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import Response

from xce.controller.web import asgibody

_NUL_MSG = "NUL characters are not allowed"


def _nul_error(loc: list[Any]) -> Response:
    body = {"detail": [{"loc": loc, "msg": _NUL_MSG, "type": "value_error.nul"}]}
    return Response(json.dumps(body), 422, media_type="application/json")


def _find_nul(obj: Any, loc: list[Any]) -> list[Any] | None:
    if isinstance(obj, str):
        return loc if "\0" in obj else None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "\0" in k:
                return [*loc, k.replace("\0", "\\u0000")]
            found = _find_nul(v, [*loc, k])
            if found is not None:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find_nul(v, [*loc, i])
            if found is not None:
                return found
    return None


_SURROGATE_MSG = "a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) is not a character"


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _find_surrogate(obj: Any, loc: list[Any]) -> list[Any] | None:
    """Where a string holds half a surrogate pair (JSON can escape one; no store can keep it)."""
    if isinstance(obj, str):
        return loc if _has_surrogate(obj) else None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if _has_surrogate(k):
                return [*loc, k.encode("utf-8", "backslashreplace").decode()]
            found = _find_surrogate(v, [*loc, k])
            if found is not None:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find_surrogate(v, [*loc, i])
            if found is not None:
                return found
    return None


async def _refuse_surrogates(body: bytes, scope, receive, send) -> bool:
    """Answer 422 (True) when the JSON body escapes a lone surrogate."""
    if b"\\ud" not in body.lower():
        return False
    try:
        found = _find_surrogate(json.loads(body), ["body"])
    except ValueError:
        return False
    if found is None:
        return False
    err = {"detail": [{"loc": found, "msg": _SURROGATE_MSG, "type": "value_error.surrogate"}]}
    await Response(json.dumps(err), 422, media_type="application/json")(scope, receive, send)
    return True


class RequestHygiene:
    """ASGI middleware: 422 for a NUL in the path, the query string or the JSON body, and for a body
    that is not UTF-8 (JSON's encoding; FastAPI would answer an undocumented 400)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\0" in scope.get("path", ""):
            await _nul_error(["path"])(scope, receive, send)
            return
        query = scope.get("query_string", b"")
        if b"%00" in query or b"\0" in query:
            for key, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
                if "\0" in key or "\0" in value:
                    await _nul_error(["query", key.replace("\0", "\\u0000")])(scope, receive, send)
                    return
        messages, body = await asgibody.read(receive)
        if body:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                err = {"detail": [{"loc": ["body", exc.start], "msg": "the body is not UTF-8 (JSON text is UTF-8)",
                                   "type": "json_invalid"}]}
                await Response(json.dumps(err), 422, media_type="application/json")(scope, receive, send)
                return
        # A JSON text can only carry a NUL as the escape \u0000: look closer only when that appears.
        if b"\\u0000" in body:
            try:
                found = _find_nul(json.loads(body), ["body"])
            except ValueError:
                found = None
            if found is not None:
                await _nul_error(found)(scope, receive, send)
                return
        if await _refuse_surrogates(body, scope, receive, send):
            return
        await self.app(scope, asgibody.replaying(messages, receive), send)


def install(app: FastAPI) -> None:
    """The last line: a value the store cannot hold is the caller's mistake (422), not the server's."""
    from sqlalchemy.exc import DataError, StatementError

    def too_wide(exc: Exception) -> bool:
        orig = getattr(exc, "orig", exc)
        return isinstance(exc, DataError) or isinstance(orig, (OverflowError, ValueError))

    async def refuse(_: Request, exc: Exception):
        if isinstance(exc, StatementError) and not too_wide(exc):
            raise exc
        body = {"detail": [{"loc": ["body"], "msg": "a value is out of range for the store (integers are 64-bit, "
                            "text has no NUL characters)", "type": "value_error.range"}]}
        return Response(json.dumps(body), 422, media_type="application/json")

    app.add_exception_handler(OverflowError, refuse)
    app.add_exception_handler(StatementError, refuse)
