"""Bearer tokens: random, issued and revoked one at a time, stored only as a hash.

A token is ``xce2_<id>.<secret>``. The id (16 hex digits) is public: ``xceadmin token list`` shows
it and ``xceadmin token revoke ID`` names it. The secret is 32 random bytes; the controller keeps
only its SHA-256, so a copy of the database lets nobody call the API (a fast hash is enough for a
256-bit random value: there is nothing to guess). Each token has an owner name, a role, a creation
time, an optional expiry and a revoked flag (see :mod:`xce.controller.auth.token_store`).

Roles: ``admin`` (people who run the cluster: every job, every endpoint), ``user`` (their own
jobs), ``worker`` (one host's agent; name ``*`` may speak for any host), ``scheduler``, and
``metrics`` (reads ``/metrics`` and nothing else: the token a Prometheus scrape job carries).

Tokens of the first format (``xce1_``, derived from a cluster secret) could not be revoked; they
are refused with a message saying so. Standard library only: the CLI imports it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

ROLES = ("admin", "user", "worker", "scheduler", "metrics")
PREFIX = "xce2_"
LEGACY_PREFIX = "xce1_"
_TOKEN = re.compile(r"xce2_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})")

#: A Unix user name as ``useradd`` and POSIX portable names allow it: letters, digits, ``_``, ``.``,
#: ``-``, not starting with ``-``, a digit or ``.``, at most 32 characters (an optional trailing
#: ``$``, as for Samba machine accounts).
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?")
#: Host names (RFC 1123 labels, dotted) for worker tokens.
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


@dataclass(frozen=True, slots=True)
class Principal:
    role: str
    name: str
    #: The token's id, or "munge" for a MUNGE credential (for audit lines).
    via: str = ""

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def user_name_problem(name: str) -> str | None:
    """Why ``name`` is not a Unix user name, or None."""
    if _USER.fullmatch(name):
        return None
    return (f"invalid user name {name!r}: expected a Unix user name (1-32 letters, digits, '_', '.' or '-', "
            f"starting with a letter or '_')")


def check_name(role: str, name: str) -> None:
    """Refuse an owner name that cannot be what ``role`` speaks for (ValueError with the reason)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
    if role == "worker":
        if name != "*" and not _HOST.fullmatch(name):
            raise ValueError(f"invalid worker name {name!r}: expected a host name, or '*' for any host")
        return
    problem = user_name_problem(name)
    if problem:
        raise ValueError(problem)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token() -> tuple[str, str, str]:
    """(id, digest of the secret, the token text given once to its holder)."""
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return token_id, digest(secret), f"{PREFIX}{token_id}.{secret}"


def parse(token: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed token, else None."""
    m = _TOKEN.fullmatch(token)
    return (m.group(1), m.group(2)) if m else None


def token_id(token: str) -> str | None:
    parsed = parse(token)
    return parsed[0] if parsed else None
