"""Issued tokens: the ``api_tokens`` table and the controller's copy of it that every request checks.

The controller is the only writer, so it keeps every token row in memory (a few hundred bytes
each) and checks a request without a query; creating or revoking a token changes the row and the
copy in the same transaction, so a revoked token is refused by the very next request. The copy is
rebuilt from the table whenever the controller reloads its state.

The service tokens ``xce up``, a worker and the scheduler read from the state directory
(``tokens/admin``, ``tokens/worker``, ``tokens/scheduler``; ``tokens/metrics`` for a Prometheus
scrape job) are ordinary rows: the controller
issues them on its first start and again whenever the file's token no longer works (revoked,
expired, or the file removed), which is how they are rotated.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from xce.client import statedir
from xce.controller.auth import tokens
from xce.controller.auth.tokens import Principal
from xce.controller.store.schema import api_tokens

SERVICE_NAMES = {"admin": "admin", "worker": "*", "scheduler": "scheduler", "metrics": "prometheus"}


@dataclass(slots=True)
class TokenRow:
    id: str
    name: str
    role: str
    digest: str
    created: int
    expires: int | None
    revoked: int | None
    revoked_by: str | None
    note: str

    def view(self) -> dict[str, Any]:
        now = time.time_ns()
        status = ("revoked" if self.revoked else "expired" if self.expires is not None and self.expires <= now
                  else "active")
        return {"id": self.id, "name": self.name, "role": self.role, "created": self.created,
                "expires": self.expires, "revoked": self.revoked, "revoked_by": self.revoked_by,
                "note": self.note, "status": status}


class Refused(Exception):
    """The token is not (or no longer) valid; the message says which."""


class TokenStore:
    def __init__(self) -> None:
        self.rows: dict[str, TokenRow] = {}

    def load(self, conn: sa.engine.Connection) -> None:
        self.rows = {r["id"]: TokenRow(**r) for r in conn.execute(sa.select(api_tokens)).mappings()}

    def verify(self, token: str, conn: sa.engine.Connection | None = None) -> Principal:
        """The principal of a valid token; :class:`Refused` saying why not.

        ``conn``: where to look for a token this copy does not know before refusing it. A follower
        passes its connection: its copy is reloaded at every leadership tick, and a token the leader
        issued since (``xceadmin token create``, a personal cluster's user token) would otherwise be
        refused by it for up to a tick. Revocations still reach a follower at the next tick."""
        if token.startswith(tokens.LEGACY_PREFIX):
            raise Refused("this token has the old format (xce1_), which cannot be revoked and is no longer "
                          "accepted; ask an administrator for a new one (xceadmin token create)")
        parsed = tokens.parse(token)
        row = self.rows.get(parsed[0]) if parsed else None
        if row is None and parsed and conn is not None:
            found = conn.execute(sa.select(api_tokens).where(api_tokens.c.id == parsed[0])).mappings().first()
            if found is not None:
                row = self.rows[found["id"]] = TokenRow(**found)
        if row is None or not hmac.compare_digest(row.digest, tokens.digest(parsed[1])):
            raise Refused("invalid token")
        if row.revoked:
            raise Refused(f"token {row.id} was revoked")
        if row.expires is not None and row.expires <= time.time_ns():
            raise Refused(f"token {row.id} has expired")
        return Principal(row.role, row.name, row.id)

    def create(self, conn: sa.engine.Connection, role: str, name: str, *, expires: int | None = None,
               note: str = "") -> tuple[TokenRow, str]:
        """Insert a new token (inside the caller's transaction); returns its row and its text."""
        tokens.check_name(role, name)
        token_id, digest, text = tokens.new_token()
        row = TokenRow(token_id, name, role, digest, time.time_ns(), expires, None, None, note)
        conn.execute(api_tokens.insert().values(
            id=row.id, name=name, role=role, digest=digest, created=row.created, expires=expires, revoked=None,
            revoked_by=None, note=note))
        self.rows[row.id] = row
        return row, text

    def revoke(self, conn: sa.engine.Connection, token_id: str, by: str) -> TokenRow | None:
        row = self.rows.get(token_id)
        if row is None:
            return None
        if not row.revoked:
            now = time.time_ns()
            conn.execute(sa.update(api_tokens).where(api_tokens.c.id == token_id).values(revoked=now, revoked_by=by))
            row.revoked, row.revoked_by = now, by
        return row

    def listing(self, *, include_inactive: bool) -> list[dict[str, Any]]:
        views = [r.view() for r in sorted(self.rows.values(), key=lambda r: (r.created, r.id))]
        return views if include_inactive else [v for v in views if v["status"] == "active"]

    def ensure_service_tokens(self, conn: sa.engine.Connection, state_dir: Path) -> None:
        """Keep each service token file working: reuse a valid one, otherwise issue a new one (0600)."""
        statedir.ensure(state_dir)
        for role in statedir.SERVICE_ROLES:
            path = statedir.token_path(state_dir, role)
            try:
                current = path.read_text().strip()
                p = self.verify(current)
                if p.role == role and p.name == SERVICE_NAMES[role]:
                    continue
            except (OSError, Refused):
                pass
            _, text = self.create(conn, role, SERVICE_NAMES[role], note=f"service token ({path})")
            statedir.write_private(path, text + "\n")
