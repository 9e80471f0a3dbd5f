"""Accounting records: per finished job and resource, declared against measured (the drift report).

Revision ID: 0002
Revises: 0001
Create Date: 2024-07-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_accounting",
        sa.Column("jobid", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("resource", sa.String(255), primary_key=True),
        sa.Column("job_type", sa.String(128), nullable=False),
        sa.Column("queue", sa.String(128), nullable=False),
        sa.Column("user", sa.String(128), nullable=False),
        sa.Column("tasks", sa.Integer, nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("exit_code", sa.Integer),
        sa.Column("exit_signal", sa.String(32)),
        sa.Column("start_time", sa.BigInteger),
        sa.Column("end_time", sa.BigInteger, nullable=False),
        sa.Column("run_time", sa.BigInteger, nullable=False),
        sa.Column("declared", sa.BigInteger, nullable=False),
        sa.Column("peak", sa.BigInteger, nullable=False),
        sa.Column("mean", sa.BigInteger, nullable=False),
        sa.Column("samples", sa.Integer, nullable=False),
    )
    op.create_index("ix_job_accounting_type", "job_accounting", ["job_type", "resource"])


def downgrade() -> None:
    op.drop_index("ix_job_accounting_type", table_name="job_accounting")
    op.drop_table("job_accounting")
