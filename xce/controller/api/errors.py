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

    @app.exception_handler(TransitionError)
    async def _transition(_: Request, exc: TransitionError):
        return json_response({"detail": str(exc)}, 409)

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict):
        return json_response({"detail": str(exc)}, 409)

    @app.exception_handler(Forbidden)
    async def _forbidden(_: Request, exc: Forbidden):
        return json_response({"detail": str(exc)}, 403)

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound):
        return json_response({"detail": str(exc)}, 404)

    @app.exception_handler(Gone)
    async def _gone(_: Request, exc: Gone):
        return json_response({"detail": str(exc)}, 410)

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError):
        return json_response({"detail": str(exc), "errors": [{"path": p, "msg": m} for p, m in exc.errors]}, 422)
