"""CPU time in milliseconds: workers report ``cpu_ms`` instead of whole seconds (``cpu_time``, which
cut a job of 0.95 s of CPU to 0), so the rows written before are converted to the new name and unit:
each job's accounting record of ``cpu_time`` (peak and mean) and the figures folded into its
``usage`` (``last``, ``peak``, ``mean``, ``sum``, each host's latest tick and the series' points are
multiplied by 1000; the per-name sample counts only change name).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

OLD, NEW = "cpu_time", "cpu_ms"
#: Jobs converted per statement batch (a long-lived store has many).
BATCH = 2000

_jobs = sa.table("jobs", sa.column("id", sa.BigInteger), sa.column("usage", sa.Text))
_acct = sa.table("job_accounting", sa.column("resource", sa.String), sa.column("peak", sa.BigInteger),
                 sa.column("mean", sa.BigInteger))


def _tick(tick: dict[str, Any], frm: str, to: str, scale: float) -> dict[str, Any]:
    if frm not in tick:
        return tick
    out = {k: v for k, v in tick.items() if k != frm}
    out[to] = round(tick[frm] * scale) if isinstance(tick[frm], int) else round(tick[frm] * scale, 3)
    return dict(sorted(out.items()))


def convert(usage: dict[str, Any], frm: str = OLD, to: str = NEW, scale: float = 1000) -> dict[str, Any]:
    """One job's folded usage with ``frm`` renamed ``to`` and its values multiplied by ``scale``."""
    out = dict(usage)
    for key in ("last", "peak", "mean", "sum"):
        if isinstance(out.get(key), dict):
            out[key] = _tick(out[key], frm, to, scale)
    if isinstance(out.get("count"), dict):
        out["count"] = _tick(out["count"], frm, to, 1)
    if isinstance(out.get("hosts"), dict):
        out["hosts"] = {h: _tick(t, frm, to, scale) for h, t in out["hosts"].items()}
    series = out.get("series")
    if isinstance(series, dict) and isinstance(series.get("points"), list):
        out["series"] = dict(series, points=[[t, _tick(v, frm, to, scale)] for t, v in series["points"]])
    return out


def _rewrite(frm: str, to: str, scale: float) -> None:
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(sa.select(_jobs.c.id, _jobs.c.usage)
                            .where(_jobs.c.id > last, _jobs.c.usage.like(f'%"{frm}"%'))
                            .order_by(_jobs.c.id).limit(BATCH)).all()
        if not rows:
            return
        updates = []
        for jobid, text in rows:
            try:
                usage = json.loads(text)
            except ValueError:
                continue
            if isinstance(usage, dict):
                updates.append({"jid": jobid, "u": json.dumps(convert(usage, frm, to, scale), separators=(",", ":"))})
        if updates:
            conn.execute(sa.update(_jobs).where(_jobs.c.id == sa.bindparam("jid")).values(usage=sa.bindparam("u")),
                         updates)
        last = rows[-1][0]


def upgrade() -> None:
    op.execute(sa.update(_acct).where(_acct.c.resource == OLD)
               .values(resource=NEW, peak=_acct.c.peak * 1000, mean=_acct.c.mean * 1000))
    _rewrite(OLD, NEW, 1000)


def downgrade() -> None:
    op.execute(sa.update(_acct).where(_acct.c.resource == NEW)
               .values(resource=OLD, peak=_acct.c.peak / 1000, mean=_acct.c.mean / 1000))
    _rewrite(NEW, OLD, 1 / 1000)
