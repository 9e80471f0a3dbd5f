"""How ``xce launch`` proves to a task server that it is the job, without the job's launch key
ever crossing the network (the task servers speak plain TCP between hosts).

The server opens every connection with a fresh random nonce; the request carries
``HMAC-SHA256(key, nonce + canonical request)`` instead of the key. Someone who reads the
traffic learns neither the key nor a request they could send again (the next connection has
another nonce), and cannot change a request (its command, environment, task ids) without
breaking its MAC. Only the launch key's holders (the job's hosts and the job's own environment)
can make one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

MAC_FIELD = "mac"


def nonce() -> str:
    return secrets.token_hex(16)


def _canonical(request: dict[str, Any]) -> bytes:
    body = {k: v for k, v in request.items() if k != MAC_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def sign(key: str, nonce_text: str, request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with its MAC for the connection that offered ``nonce_text``."""
    mac = hmac.new(key.encode(), nonce_text.encode() + b"\n" + _canonical(request), hashlib.sha256).hexdigest()
    return {**request, MAC_FIELD: mac}


def verify(key: str, nonce_text: str, request: dict[str, Any]) -> bool:
    given = request.get(MAC_FIELD)
    if not key or not isinstance(given, str):
        return False
    return hmac.compare_digest(sign(key, nonce_text, request)[MAC_FIELD], given)
