"""Who may call what: bearer-token authentication and role checks for the API.

Every request needs ``Authorization: Bearer TOKEN`` (see :mod:`xce.controller.tokens` for how
tokens are made); a missing or invalid token is 401. Each endpoint names the roles it admits and
anything else is 403. ``admin`` is admitted everywhere; a ``user`` token whose name is listed in
the configuration's ``admins`` counts as admin. Ownership of jobs is checked by the domain code
(:func:`xce.controller.control.check_owner`), not here.
"""

from __future__ import annotations

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from xce.controller import tokens
from xce.controller.tokens import Principal

_bearer = HTTPBearer(auto_error=False, description="A token from the state directory or `xceadmin user add`.")
_cache: dict[tuple[bytes, str], Principal | None] = {}


def authenticate(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Principal:
    if credentials is None or not credentials.credentials:
        raise HTTPException(401, "missing bearer token (send 'Authorization: Bearer TOKEN')",
                            headers={"WWW-Authenticate": "Bearer"})
    ctl = request.app.state.ctl
    key = (ctl.secret, credentials.credentials)
    if key in _cache:
        p = _cache[key]
    else:
        p = tokens.verify(ctl.secret, credentials.credentials)
        if len(_cache) > 10_000:
            _cache.clear()
        _cache[key] = p
    if p is None:
        raise HTTPException(401, "invalid token", headers={"WWW-Authenticate": "Bearer"})
    if p.role == "user" and p.name in ctl.config.admins:
        return Principal("admin", p.name)
    return p


def require(*roles: str):
    """A dependency admitting ``roles`` (and admins), returning the caller."""
    allowed = frozenset(roles) | {"admin"}
    words = ", ".join(sorted(allowed))

    async def dependency(request: Request,
                         credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> Principal:
        p = authenticate(request, credentials)
        if p.role not in allowed:
            raise HTTPException(403, f"a {p.role} token cannot call this endpoint (it needs a token of role: {words})")
        return p

    return dependency


any_role = require("user", "worker", "scheduler")
people = require("user")
admin_only = require()
worker_role = require("worker")
scheduler_role = require("scheduler")
