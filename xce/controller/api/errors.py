"""Domain refusals to HTTP: 422 field errors in FastAPI's shape, 409/403/404/410 with a sentence."""

from __future__ import annotations

from fastapi import FastAPI, Request

from xce.config.loader import ConfigError
from xce.controller.api.responses import json_response
from xce.controller.errors import Conflict, FieldErrors, Forbidden, Gone, NotFound
from xce.controller.states import TransitionError


def install(app: FastAPI) -> None:
    @app.exception_handler(FieldErrors)
    async def _fields(_: Request, exc: FieldErrors):
        return json_response({"detail": exc.errors}, 422)

    for exc_type, status in ((TransitionError, 409), (Conflict, 409), (Forbidden, 403), (NotFound, 404),
                             (Gone, 410)):
        app.add_exception_handler(exc_type, _sentence(status))

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError):
        return json_response({"detail": str(exc), "errors": [{"path": p, "msg": m} for p, m in exc.errors]}, 422)


def _sentence(status: int):
    """A handler answering ``status`` with the refusal's own sentence as the detail."""

    async def handler(_: Request, exc: Exception):
        return json_response({"detail": str(exc)}, status)

    return handler
