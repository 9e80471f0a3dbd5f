"""What holds a host's jobs together, and why an administrator closed the host.

``containment`` is what the worker registered with (``cgroup-v2``, ``cgroup-v1`` or
``process-group``), shown by ``xce hosts -l``; ``closed`` is the reason given to ``xceadmin host
close`` (null while the host is open), shown by ``xce hosts``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("hosts", sa.Column("containment", sa.String(32)))
    op.add_column("hosts", sa.Column("closed", sa.Text))


def downgrade() -> None:
    op.drop_column("hosts", "closed")
    op.drop_column("hosts", "containment")
