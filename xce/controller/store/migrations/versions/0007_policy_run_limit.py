"""Each job's run limit in seconds (``xce submit -W``/``--time`` or its queue's default).

Kept in its own column rather than inside ``limits``: the scheduler reads it with the job
(backfilling plans with it) and the worker ends the job when it is reached.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("run_limit", sa.BigInteger))


def downgrade() -> None:
    op.drop_column("jobs", "run_limit")
