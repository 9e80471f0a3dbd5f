"""Small helpers every router uses: the controller of a request, JSON out, long-polling."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable

from fastapi import Request
from fastapi.responses import Response

from xce.controller.service import Controller, Signal

MAX_WAIT_S = 60.0


def ctl_of(request: Request) -> Controller:
    return request.app.state.ctl


def json_response(obj: Any, status: int = 200) -> Response:
    """JSON without FastAPI's encoder pass: our payloads are plain dicts already."""
    return Response(json.dumps(obj, separators=(",", ":")), status_code=status, media_type="application/json")


def raw_json(text: str, status: int = 200) -> Response:
    return Response(text, status_code=status, media_type="application/json")


async def long_poll(signal: Signal, wait: float, fetch: Callable[[], Any], empty: Callable[[Any], bool]) -> Any:
    """``fetch()`` now; while it finds nothing and ``wait`` seconds have not passed, sleep until the
    next commit that could matter and fetch again."""
    deadline = time.monotonic() + min(max(wait, 0.0), MAX_WAIT_S)
    while True:
        result = fetch()
        remaining = deadline - time.monotonic()
        if not empty(result) or remaining <= 0:
            return result
        await signal.wait(remaining)
        await asyncio.sleep(0)
