"""Small helpers every router uses: the controller of a request, JSON out, long-polling."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Callable

from fastapi import Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from xce.controller.service import Controller, Signal, dumpb

MAX_WAIT_S = 60.0
MAX_ID = 2**63 - 1

#: A job id in a path: a positive 64-bit integer (anything else is 422 before the store sees it).
JobId = Annotated[int, Path(ge=1, le=MAX_ID, description="Job id")]
#: A feed cursor: an event, action or control sequence number already seen (0 for none).
Cursor = Annotated[int, Query(ge=0, le=MAX_ID, description="Return entries after this sequence number")]


def ctl_of(request: Request) -> Controller:
    return request.app.state.ctl


def json_response(obj: Any, status: int = 200) -> Response:
    """JSON without FastAPI's encoder pass: our payloads are plain dicts already."""
    return Response(dumpb(obj), status_code=status, media_type="application/json")


def raw_json(text: str, status: int = 200) -> Response:
    return Response(text, status_code=status, media_type="application/json")


async def long_poll(signal: Signal, wait: float, fetch: Callable[[], Any], empty: Callable[[Any], bool]) -> Any:
    """``fetch()`` now; while it finds nothing and ``wait`` seconds have not passed, sleep until the
    next commit that could matter and fetch again; once the server stops (``signal.closed``), answer."""
    deadline = time.monotonic() + min(max(wait, 0.0), MAX_WAIT_S)
    while True:
        result = fetch()
        remaining = deadline - time.monotonic()
        if not empty(result) or remaining <= 0 or signal.closed:
            return result
        await signal.wait(remaining)
        await asyncio.sleep(0)


class Refusal(BaseModel):
    detail: str = Field(..., description="What was refused and why, in one sentence.")


class FieldProblem(BaseModel):
    loc: list[str | int] = Field(..., description="Where: body/query/path, then the field path.")
    msg: str
    type: str


class FieldProblems(BaseModel):
    detail: list[FieldProblem]


_MEANING = {
    401: "No credential, or one that is invalid, revoked or expired (`WWW-Authenticate` names the scheme).",
    403: "The caller's role may not call this, or the object belongs to someone else.",
    404: "No such job, host or token.",
    409: "Well-formed, but the current state forbids it (a job's state, a personal cluster).",
    410: "The events after this cursor were pruned: resynchronise from the full state.",
    413: "The request body is larger than the controller accepts.",
    422: "A field, path or query value is wrong (including NUL characters and ids beyond 64 bits).",
    503: "A MUNGE credential could not be checked (munged unreachable).",
}


def documented(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the refusals a route gives (401, 403 and 422 come with every router)."""
    return {c: {"model": FieldProblems if c == 422 else Refusal, "description": _MEANING[c]} for c in codes}


#: What every authenticated route can answer besides success.
COMMON = documented(401, 403, 422, 503)
