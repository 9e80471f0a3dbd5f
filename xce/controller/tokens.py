"""Bearer tokens derived from the cluster secret.

A token is ``xce1_<base64url(role:name)>.<base64url(HMAC-SHA256(secret, "xce-token-v1|role|name"))>``.
Deriving instead of storing means ``xceadmin user add`` works with nothing but read access to the
state directory (no running controller, no database), a token survives a restore of the database,
and checking one costs an HMAC, not a query. The price is revocation: a single token cannot be
withdrawn; replacing the ``secret`` file (and restarting) invalidates every token at once.

Roles: ``admin`` (people who run the cluster: every job, every endpoint), ``user`` (their own
jobs), ``worker`` (one host's agent; name ``*`` may speak for any host), ``scheduler``.

Standard library only: the CLI imports it to issue tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from xce.controller import statedir

ROLES = ("admin", "user", "worker", "scheduler")
_PREFIX = "xce1_"
_MAX_NAME = 128


@dataclass(frozen=True, slots=True)
class Principal:
    role: str
    name: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, role: str, name: str) -> str:
    return _b64(hmac.new(secret, f"xce-token-v1|{role}|{name}".encode(), hashlib.sha256).digest())


def check_name(name: str) -> None:
    if not name or len(name) > _MAX_NAME or any(c.isspace() or c in ":|" for c in name):
        raise ValueError(f"invalid name {name!r}: expected 1-{_MAX_NAME} characters without spaces, ':' or '|'")


def make_token(secret: bytes, role: str, name: str) -> str:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
    check_name(name)
    return f"{_PREFIX}{_b64(f'{role}:{name}'.encode())}.{_mac(secret, role, name)}"


def verify(secret: bytes, token: str) -> Principal | None:
    """The principal a token speaks for, or None for anything forged, truncated or malformed."""
    if not token.startswith(_PREFIX) or "." not in token:
        return None
    body, _, mac = token[len(_PREFIX):].rpartition(".")
    try:
        role, _, name = _unb64(body).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    if role not in ROLES or not name:
        return None
    if not hmac.compare_digest(mac, _mac(secret, role, name)):
        return None
    return Principal(role, name)


def unverified_principal(token: str) -> Principal | None:
    """Who a token claims to be, without the secret (for a client that wants its own name)."""
    if not token.startswith(_PREFIX) or "." not in token:
        return None
    try:
        role, _, name = _unb64(token[len(_PREFIX):].rpartition(".")[0]).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return Principal(role, name) if role in ROLES and name else None


def load_secret(state_dir: Path) -> bytes:
    path = statedir.secret_path(state_dir)
    return bytes.fromhex(path.read_text().strip())


def load_or_create_secret(state_dir: Path) -> bytes:
    """The cluster secret, created (0600) on first start."""
    path = statedir.secret_path(state_dir)
    if not path.exists():
        statedir.ensure(state_dir)
        statedir.write_private(path, secrets.token_hex(32) + "\n")
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        os.chmod(path, 0o600)
    return load_secret(state_dir)


def write_service_tokens(state_dir: Path, secret: bytes) -> None:
    """The admin, worker and scheduler tokens ``xce up`` and tests read (0600, rewritten each start)."""
    statedir.ensure(state_dir)
    names = {"admin": "admin", "worker": "*", "scheduler": "scheduler"}
    for role in statedir.SERVICE_ROLES:
        statedir.write_private(statedir.token_path(state_dir, role), make_token(secret, role, names[role]) + "\n")
