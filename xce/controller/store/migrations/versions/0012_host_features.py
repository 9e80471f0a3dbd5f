"""Host features a worker registers with (``xce worker --feature``), kept so that a restarted
controller places ``--constraint`` jobs before the worker registers again. JSON text, as the host's
``resources`` are.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("hosts", sa.Column("features", sa.Text))


def downgrade() -> None:
    op.drop_column("hosts", "features")
