"""Domain refusals to HTTP: 422 field errors in FastAPI's shape, 409/403/404/410 with a sentence, 503 from a
controller that lost the lead mid-request."""

from __future__ import annotations

import json

from fastapi import FastAPI, Request
from fastapi.responses import Response

from xce.config.loader import ConfigError
from xce.controller.api.responses import json_response
from xce.controller.errors import Conflict, FieldErrors, Forbidden, Gone, NotFound
from xce.controller.ha.leadership import NotLeader
from xce.controller.jobs.states import TransitionError


def install(app: FastAPI) -> None:
    @app.exception_handler(FieldErrors)
    async def _fields(_: Request, exc: FieldErrors):
        return json_response({"detail": exc.errors}, 422)

    for exc_type, status in ((TransitionError, 409), (Conflict, 409), (Forbidden, 403), (NotFound, 404),
                             (Gone, 410)):
        app.add_exception_handler(exc_type, _sentence(status))

    @app.exception_handler(NotLeader)
    async def _not_leader(_: Request, exc: NotLeader):
        # The transaction was rolled back: the client may send the request again, to the leader.
        from xce.client.follow import LEADER_HEADER

        return Response(json.dumps({"detail": str(exc)}), 503, media_type="application/json",
                        headers={LEADER_HEADER: exc.leader_url or "", "Retry-After": "1"})

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError):
        return json_response({"detail": str(exc), "errors": [{"path": p, "msg": m} for p, m in exc.errors]}, 422)


def _sentence(status: int):
    """A handler answering ``status`` with the refusal's own sentence as the detail."""

    async def handler(_: Request, exc: Exception):
        return json_response({"detail": str(exc)}, status)

    return handler
