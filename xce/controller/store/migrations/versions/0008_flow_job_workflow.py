"""What the job workflow LSF and Slurm users expect needs on each job: a name, a hold, a begin time,
a dependency expression, an array's running limit, and the gate that says why a pending job is not
yet shown to the scheduler.

``gate`` is null for a pending job the scheduler may place; otherwise it names what holds it back
(``held``, ``depend``, ``begin``, ``limit``) and the controller, not the scheduler, sets its pend
reason. The index on (state, gate) keeps the controller's look at gated jobs one indexed read.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for column in (sa.Column("name", sa.String(128)), sa.Column("gate", sa.String(16)),
                   sa.Column("held_by", sa.String(160)), sa.Column("begin_time", sa.BigInteger),
                   sa.Column("depend", sa.Text), sa.Column("array_limit", sa.Integer)):
        op.add_column("jobs", column)
    op.create_index("ix_jobs_state_gate", "jobs", ["state", "gate"])
    op.create_index("ix_jobs_user_name", "jobs", ["user", "name"])
    op.create_index("ix_jobs_array_id", "jobs", ["array_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_array_id", table_name="jobs")
    op.drop_index("ix_jobs_user_name", table_name="jobs")
    op.drop_index("ix_jobs_state_gate", table_name="jobs")
    with op.batch_alter_table("jobs") as b:
        for col in ("array_limit", "depend", "begin_time", "held_by", "gate", "name"):
            b.drop_column(col)
