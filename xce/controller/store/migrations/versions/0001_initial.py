"""The initial controller schema: jobs, their history, the event log, hosts, worker actions,
applied decisions, scheduler control commands and a key/value table.

Revision ID: 0001
Revises:
Create Date: 2024-06-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("user", sa.String(128), nullable=False),
        sa.Column("queue", sa.String(128), nullable=False),
        sa.Column("project", sa.String(128), nullable=False),
        sa.Column("job_type", sa.String(128), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("tasks", sa.Integer, nullable=False),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("sched_request", sa.Text, nullable=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("cwd", sa.Text),
        sa.Column("env", sa.Text),
        sa.Column("stdout", sa.Text),
        sa.Column("stderr", sa.Text),
        sa.Column("requests", sa.Text),
        sa.Column("limits", sa.Text),
        sa.Column("array_id", sa.BigInteger),
        sa.Column("array_index", sa.Integer),
        sa.Column("submit_time", sa.BigInteger, nullable=False),
        sa.Column("start_time", sa.BigInteger),
        sa.Column("end_time", sa.BigInteger),
        sa.Column("placement", sa.Text),
        sa.Column("head_host", sa.String(255)),
        sa.Column("pend_reasons", sa.Text),
        sa.Column("reason", sa.Text),
        sa.Column("exit_code", sa.Integer),
        sa.Column("exit_signal", sa.String(32)),
        sa.Column("usage", sa.Text),
    )
    op.create_index("ix_jobs_state", "jobs", ["state"])
    op.create_index("ix_jobs_user_state", "jobs", ["user", "state"])
    op.create_index("ix_jobs_head_host", "jobs", ["head_host"])

    op.create_table(
        "job_history",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("jobid", sa.BigInteger, nullable=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("from_state", sa.String(8)),
        sa.Column("to_state", sa.String(8), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.String(160), nullable=False),
    )
    op.create_index("ix_job_history_jobid", "job_history", ["jobid"])

    op.create_table(
        "events",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
    )

    op.create_table(
        "hosts",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("resources", sa.Text, nullable=False),
        sa.Column("load", sa.Text, nullable=False),
        sa.Column("registered", sa.BigInteger, nullable=False),
        sa.Column("last_seen", sa.BigInteger, nullable=False),
    )

    op.create_table(
        "actions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("jobid", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created", sa.BigInteger, nullable=False),
        sa.Column("delivered", sa.BigInteger),
    )
    op.create_index("ix_actions_host", "actions", ["host", "id"])

    op.create_table(
        "decisions",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("applied", sa.BigInteger, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
    )
    op.create_index("ix_decisions_applied", "decisions", ["applied"])

    op.create_table(
        "control",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("command", sa.Text, nullable=False),
    )

    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("meta", "control", "decisions", "actions", "hosts", "events", "job_history", "jobs"):
        op.drop_table(table)
