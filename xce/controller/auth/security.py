"""Who may call what: authentication (bearer tokens, MUNGE) and role checks for the API.

A request proves its caller with one ``Authorization`` header:

* ``Bearer TOKEN``: an issued token (:mod:`xce.controller.auth.token_store`); unknown, revoked or
  expired is 401 at once;
* ``MUNGE CREDENTIAL`` where ``[auth] munge = true``: a credential the local ``munged`` made for
  the caller's uid (:mod:`xce.munge`), bound to this request's method and path; the caller is the
  user that uid names on the controller's host, with role ``user``. Forged (another key),
  expired and replayed credentials are 401.

Each endpoint names the roles it admits and anything else is 403. ``admin`` is admitted
everywhere; a ``user`` whose name is listed in the configuration's ``admins`` counts as admin. A
personal cluster (``xce up`` without ``--multi-user``) runs every job as the user who started it,
so it serves only that user and the admin token: any other person is 403. Ownership of jobs is
checked by the domain code (:func:`xce.controller.jobs.control.check_owner`), not here. The dashboard's
session cookie carries a bearer token, checked by the same :func:`bearer_principal`.
"""

from __future__ import annotations

import pwd

import sqlalchemy as sa
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from xce import munge
from xce.controller.auth.token_store import SERVICE_NAMES, Refused
from xce.controller.auth.tokens import Principal

_bearer = HTTPBearer(auto_error=False, description="A token from `xceadmin token create` (or the state "
                     "directory's service tokens). Hosts with MUNGE may send `Authorization: MUNGE CREDENTIAL` "
                     "instead, a credential whose payload is `xce METHOD PATH`.")


def _unauthorized(detail: str, scheme: str = "Bearer") -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": scheme})


def munge_payload(method: str, path: str) -> bytes:
    """What a MUNGE credential for one request carries, so it cannot be used for another."""
    return f"xce {method.upper()} {path}".encode()


async def _munge_principal(request: Request, credential: str) -> Principal:
    ctl = request.app.state.ctl
    auth = ctl.config.auth
    if not auth.munge:
        raise _unauthorized("this controller does not accept MUNGE credentials ([auth] munge = false); "
                            "send a bearer token", "MUNGE")
    try:
        cred = await run_in_threadpool(munge.decode, credential, socket=auth.munge_socket)
    except munge.MungeError as exc:
        if exc.code == munge.SOCKET_ERROR or exc.code == 0:
            raise HTTPException(503, f"cannot check the MUNGE credential: {exc}") from None
        why = {munge.CRED_EXPIRED: "has expired", munge.CRED_REPLAYED: "was already used (replayed)",
               munge.CRED_REWOUND: "comes from the future (clocks out of step?)"}.get(
                   exc.code, f"is not valid ({exc}; made with another key?)")
        raise _unauthorized(f"MUNGE credential {why}", "MUNGE") from None
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    if cred.payload != munge_payload(request.method, raw_path.decode("latin-1")):
        raise _unauthorized("MUNGE credential was made for another request", "MUNGE")
    try:
        name = pwd.getpwuid(cred.uid).pw_name
    except KeyError:
        raise _unauthorized(f"uid {cred.uid} of the MUNGE credential has no user name on the controller's host",
                            "MUNGE") from None
    return Principal("user", name, "munge")


def bearer_principal(request: Request, token: str) -> Principal:
    """Who a bearer token speaks for: 401 for an unknown, revoked or expired token, 403 for a person a
    personal cluster does not serve. The API's ``Authorization`` header and the dashboard's session
    cookie both come here."""
    ctl = request.app.state.ctl
    try:
        if ctl.leader or ctl.conn is None:  # the leader issues every token: its copy is the table
            p = ctl.tokens.verify(token)
        else:
            try:
                with ctl.reading() as conn:
                    p = ctl.tokens.verify(token, conn)
            except sa.exc.SQLAlchemyError:  # the database does not answer: what this copy knows
                p = ctl.tokens.verify(token)
    except Refused as exc:
        raise _unauthorized(str(exc)) from None
    return _as_person(ctl, p)


def _as_person(ctl, p: Principal) -> Principal:
    if p.role in ("user", "admin"):
        owner = ctl.settings.single_user
        if owner is not None and p.name not in (owner, "admin"):
            raise HTTPException(403, f"this is a personal cluster: every job runs as {owner}, so it serves only "
                                     f"{owner}; an administrator can start it with `xce up --multi-user` (as root) "
                                     f"so that each user's jobs run as that user")
        if p.role == "user" and p.name in ctl.config.admins:
            return Principal("admin", p.name, p.via)
    return p


def job_owner(ctl, p: Principal) -> str:
    """Whose a job ``p`` submits is, as its owner runs it on a multi-user cluster's root workers.

    Root's jobs run as root only where the site allows it (``allow_root_jobs = true``, and workers
    started with ``--allow-root-jobs``), as LSF refuses root's ``bsub`` unless ``LSF_ROOT_USER=Y``:
    elsewhere they are refused here, with the reason, instead of being accepted and then failing on
    every worker. The admin service token (``tokens/admin``) names no person; on the controller's
    host it is what root's commands fall back to, so it follows root's rule: its jobs are root's
    where those are allowed, refused where they are not (a job owned by "admin" would be accepted
    and then fail on every worker that has no such user). A personal cluster runs every job as its
    owner and has no such rule."""
    if ctl.settings.single_user is not None:
        return p.name
    service = p.role == "admin" and p.name == SERVICE_NAMES["admin"]
    if ctl.config.allow_root_jobs:
        return "root" if service else p.name
    if p.name == "root" or service:
        whose = "root's jobs" if p.name == "root" else "the admin service token speaks for root, and root's jobs"
        raise HTTPException(403, f"{whose} are not allowed on this cluster (allow_root_jobs = false in xce.toml): "
                                 "submit as an ordinary user")
    return p.name


async def authenticate(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Principal:
    if credentials is not None and credentials.credentials:
        return bearer_principal(request, credentials.credentials)
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "munge" and value.strip():
        return _as_person(request.app.state.ctl, await _munge_principal(request, value.strip()))
    raise _unauthorized("missing bearer token (send 'Authorization: Bearer TOKEN')")


def check_role(p: Principal, allowed: frozenset[str]) -> None:
    if p.role not in allowed | {"admin"}:
        words = ", ".join(sorted(allowed | {"admin"}))
        raise HTTPException(403, f"a {p.role} token cannot call this endpoint (it needs a token of role: {words})")


async def _admit(request: Request, credentials: HTTPAuthorizationCredentials | None,
                 allowed: frozenset[str]) -> Principal:
    p = await authenticate(request, credentials)
    check_role(p, allowed)
    return p


async def authorize(request: Request, allowed: frozenset[str]) -> Principal:
    """The caller, if its role is one of ``allowed`` (or admin): what a dependency made by
    :func:`require` answers, for the fast lane (:mod:`xce.controller.api.fastlane`)."""
    return await _admit(request, await _bearer(request), allowed)


def require(*roles: str):
    """A dependency admitting ``roles`` (and admins), returning the caller."""
    allowed = frozenset(roles)

    async def dependency(request: Request,
                         credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> Principal:
        return await _admit(request, credentials, allowed)

    dependency.roles = allowed  # type: ignore[attr-defined]  # what the fast lane admits
    return dependency


async def scraper(request: Request,
                  credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> Principal | None:
    """``/metrics``: nobody needs a token when ``[metrics] public = true``; otherwise any role may read it,
    the scrape-only ``metrics`` role included. A token that is sent is checked even when public."""
    if request.app.state.ctl.config.metrics.public and "authorization" not in request.headers:
        return None
    p = await authenticate(request, credentials)
    check_role(p, frozenset({"user", "worker", "scheduler", "metrics"}))
    return p


any_role = require("user", "worker", "scheduler")
people = require("user")
admin_only = require()
worker_role = require("worker")
scheduler_role = require("scheduler")
