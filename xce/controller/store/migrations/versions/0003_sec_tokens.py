"""Issued API tokens, stored hashed, each revocable on its own (xceadmin token create/list/revoke).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created", sa.BigInteger, nullable=False),
        sa.Column("expires", sa.BigInteger),
        sa.Column("revoked", sa.BigInteger),
        sa.Column("revoked_by", sa.String(160)),
        sa.Column("note", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("api_tokens")
