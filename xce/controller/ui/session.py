"""Log-in for the dashboard: the API token, kept in a session cookie.

A person logs in by pasting the same token the CLI uses; the controller checks it exactly as it
checks a bearer header (:func:`xce.controller.auth.security.bearer_principal`), so a token that stops
being valid (revoked, expired) logs the browser out at its next request, and the dashboard never
grants more than the API would. The cookie is ``HttpOnly`` (page scripts cannot read it),
``SameSite=Strict`` (no other site can make the browser send it), scoped to ``/ui`` and without an
expiry, so it ends with the browser session. Every form that changes something also carries a
value derived from the session's token (an HMAC keyed with it), checked on POST: a second guard
against cross-site requests should a browser ignore ``SameSite``; knowing that value reveals
nothing of the token.
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import HTTPException, Request
from fastapi.responses import Response

from xce.controller.auth.security import bearer_principal
from xce.controller.auth.tokens import Principal

COOKIE = "xce_session"
#: Roles that may use the dashboard: people. Service tokens (worker, scheduler, metrics) have no pages.
PEOPLE = frozenset({"user", "admin"})


class NotLoggedIn(Exception):
    """No valid session: the page answers with the log-in page (or 401 to a refresh)."""


def token_of(request: Request) -> str | None:
    return request.cookies.get(COOKIE) or None


def check(request: Request, token: str) -> Principal | str:
    """The principal of ``token``, or a sentence saying why it cannot log in."""
    try:
        p = bearer_principal(request, token.strip())
    except HTTPException as exc:
        if exc.detail == "invalid token":
            return "this token is not valid for this cluster (check that you copied all of it)"
        return str(exc.detail)
    if p.role not in PEOPLE:
        return f"a {p.role} token cannot log in to the dashboard; use a user or admin token"
    return p


def viewer(request: Request) -> Principal:
    token = token_of(request)
    if token is None:
        raise NotLoggedIn()
    p = check(request, token)
    if isinstance(p, str):
        raise NotLoggedIn()
    return p


def csrf(request: Request) -> str:
    return hmac.new((token_of(request) or "").encode(), b"xce-ui-csrf", hashlib.sha256).hexdigest()[:32]


def csrf_ok(request: Request, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(sent, csrf(request))


def log_in(response: Response, request: Request, token: str) -> None:
    response.set_cookie(COOKIE, token.strip(), path="/ui", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


def log_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/ui")
