"""A pending job's reason category, so that "pending by reason" is one indexed count.

The category is the ``step`` of the job's first pend reason (``select``, ``slots``, ``shared``,
``span``, ...), written with the reasons. Counting waiting jobs by category for ``/metrics`` and the
dashboard is then an index-only scan instead of parsing every waiting job's reasons.

Revision ID: 0005
Revises: 0004
Create Date: 2024-08-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("pend_category", sa.String(32)))
    op.create_index("ix_jobs_state_pend_category", "jobs", ["state", "pend_category"])


def downgrade() -> None:
    op.drop_index("ix_jobs_state_pend_category", table_name="jobs")
    op.drop_column("jobs", "pend_category")
