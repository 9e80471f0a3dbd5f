"""A request's body read by ASGI middleware, and handed on as if it had not been.

The request hygiene and the fast lane both need a body before the application reads it; what they
read is replayed to whatever runs next, message by message, then the connection's own ``receive``.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

Receive = Callable[[], Awaitable[dict[str, Any]]]


async def read(receive: Receive) -> tuple[list[dict[str, Any]], bytes]:
    """The messages of the body and the body they carry (up to a disconnect, if one comes first)."""
    messages: list[dict[str, Any]] = []
    body = b""
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    return messages, body


def replaying(messages: list[dict[str, Any]], receive: Receive) -> Receive:
    """A ``receive`` that gives ``messages`` again, then goes on with ``receive``."""
    replay = iter(messages)

    async def again() -> dict[str, Any]:
        message = next(replay, None)
        return message if message is not None else await receive()

    return again
