"""Requests no handler should ever see: NUL characters, bodies that are not UTF-8, numbers JSON
does not have (NaN, Infinity, 1e999) and values too wide for the store.

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
import math
import re
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import Response

from xce.controller.web import asgibody

_NUL_MSG = "NUL characters are not allowed"


def _nul_error(loc: list[Any]) -> Response:
    body = {"detail": [{"loc": loc, "msg": _NUL_MSG, "type": "value_error.nul"}]}
    return Response(json.dumps(body), 422, media_type="application/json")


def _find(obj: Any, loc: list[Any], bad: Any, key_shown: Any) -> list[Any] | None:
    """Where in a decoded JSON value the first key or leaf that ``bad`` refuses is (None: nowhere);
    a refused key is named as ``key_shown`` writes it."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if bad(k):
                return [*loc, key_shown(k)]
            found = _find(v, [*loc, k], bad, key_shown)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find(v, [*loc, i], bad, key_shown)
            if found is not None:
                return found
    elif bad(obj):
        return loc
    return None


def _find_nul(obj: Any, loc: list[Any]) -> list[Any] | None:
    return _find(obj, loc, lambda x: isinstance(x, str) and "\0" in x, lambda k: k.replace("\0", "\\u0000"))


_SURROGATE_MSG = "a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) is not a character"


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _find_surrogate(obj: Any, loc: list[Any]) -> list[Any] | None:
    """Where a string holds half a surrogate pair (JSON can escape one; no store can keep it)."""
    return _find(obj, loc, lambda x: isinstance(x, str) and _has_surrogate(x),
                 lambda k: k.encode("utf-8", "backslashreplace").decode())


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


class _NonFinite(str):
    """A number as written that no float holds: NaN, Infinity, or one beyond 1.8e308."""


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


#: What may begin a non-finite number; only a body holding one is decoded here.
_MAYBE_NONFINITE = re.compile(rb"NaN|Infinity|[0-9][eE]|[0-9]{309}")


async def _refuse_non_finite(body: bytes, scope, receive, send) -> bool:
    """Answer 422 (True) when the JSON body holds ``NaN``, ``Infinity`` or a number too large for a
    float: Python's json reads them, no JSON peer writes them, and answering with one is a 500."""
    if not _MAYBE_NONFINITE.search(body):
        return False
    try:
        value = json.loads(body, parse_constant=_NonFinite, parse_float=_float)
    except ValueError:
        return False
    found = _find(value, ["body"], lambda x: type(x) is _NonFinite, str)
    if found is None:
        return False
    leaf: Any = value
    for step in found[1:]:
        leaf = leaf[step]
    err = {"detail": [{"loc": found, "msg": f"{leaf} is not a number JSON allows (a finite number is expected)",
                       "type": "value_error.number"}]}
    await Response(json.dumps(err), 422, media_type="application/json")(scope, receive, send)
    return True


class RequestHygiene:
    """ASGI middleware: 422 for a NUL in the path, the query string or the JSON body, for a body
    that is not UTF-8 (JSON's encoding; FastAPI would answer an undocumented 400) and for a number
    that is not finite. It sits outside the fast lane (:mod:`xce.controller.api.fastlane`), so the
    lane's routes and FastAPI's are refused the same bodies."""

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
        if body and await _refuse_non_finite(body, scope, receive, send):
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
