"""Who asked to requeue a job that still runs (``xce requeue`` of a RUN job): its processes are
stopped first, and however that run ends the job goes back to PEND (xce.controller.jobs.control).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("requeue_by", sa.String(160)))


def downgrade() -> None:
    op.drop_column("jobs", "requeue_by")
