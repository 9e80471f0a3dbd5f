"""Several controllers on one database: the leadership lease, and submission idempotency keys.

Revision ID: 0004
Revises: 0003
Create Date: 2024-08-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leadership",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("term", sa.BigInteger, nullable=False),
        sa.Column("holder", sa.String(255), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("state_dir", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("since", sa.BigInteger, nullable=False),
        sa.Column("expires", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "submit_keys",
        sa.Column("user", sa.String(128), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("jobid", sa.BigInteger, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_submit_keys_ts", "submit_keys", ["ts"])


def downgrade() -> None:
    op.drop_index("ix_submit_keys_ts", table_name="submit_keys")
    op.drop_table("submit_keys")
    op.drop_table("leadership")
