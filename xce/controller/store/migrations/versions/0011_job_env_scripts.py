"""What a job needs to run as LSF and Slurm run it: its spooled script, exclusive hosts, and the
options that change how it starts (cpus per task, host lists, a warning signal before its run
limit, the output files' open mode, an interactive terminal, where it was submitted from), and how
a finished job ended as one word (``end_code``: RUNLIMIT, MEMLIMIT, KILLED ...) beside the prose.

A submission's script is stored once in ``job_scripts`` under the submission's first job id (an
array's elements share it) and read by the worker from the start action: the submitted file may
be gone by then. ``options`` is JSON text, as ``env`` and ``requests`` are.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("script_id", sa.BigInteger))
    op.add_column("jobs", sa.Column("exclusive", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("jobs", sa.Column("options", sa.Text))
    op.add_column("jobs", sa.Column("end_code", sa.String(16)))
    op.create_table(
        "job_scripts",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("user", sa.String(128), nullable=False),
        sa.Column("script", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("job_scripts")
    op.drop_column("jobs", "end_code")
    op.drop_column("jobs", "options")
    op.drop_column("jobs", "exclusive")
    op.drop_column("jobs", "script_id")
