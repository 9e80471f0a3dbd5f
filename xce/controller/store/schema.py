"""The one schema, for SQLite and PostgreSQL alike.

Columns that hold structures (command, env, placement, payloads) are JSON *text*, not a JSON
type: the event feed serves payloads back byte for byte without parsing them, and the two
engines then store exactly the same thing. Identifiers the controller hands out (job ids, event
seqs, action ids) are assigned by the controller itself, not by the database, so that an array
of N jobs is one bulk insert with ids known in advance; the controller is the only writer, and
it reloads its counters from ``max()`` at start.

Changing anything here needs a migration in ``migrations/versions``; a test compares the two.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

jobs = sa.Table(
    "jobs",
    metadata,
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
    sa.Column("run_limit", sa.BigInteger),  # seconds (0007_policy_run_limit)
    sa.Column("array_id", sa.BigInteger),
    sa.Column("array_index", sa.Integer),
    sa.Column("submit_time", sa.BigInteger, nullable=False),
    sa.Column("start_time", sa.BigInteger),
    sa.Column("end_time", sa.BigInteger),
    sa.Column("placement", sa.Text),
    sa.Column("head_host", sa.String(255)),
    sa.Column("pend_reasons", sa.Text),
    sa.Column("pend_category", sa.String(32)),  # the step of the first pend reason (0005_ui_pend_category)
    sa.Column("reason", sa.Text),
    sa.Column("exit_code", sa.Integer),
    sa.Column("exit_signal", sa.String(32)),
    sa.Column("usage", sa.Text),
    # The job workflow (0008_flow_job_workflow): see xce.controller.jobs.gates.
    sa.Column("name", sa.String(128)),
    sa.Column("gate", sa.String(16)),
    sa.Column("held_by", sa.String(160)),
    sa.Column("begin_time", sa.BigInteger),
    sa.Column("depend", sa.Text),
    sa.Column("array_limit", sa.Integer),
    sa.Column("rerunnable", sa.Boolean, nullable=False, server_default=sa.false()),  # 0009_contain_rerunnable
    sa.Column("requeue_by", sa.String(160)),  # who requeued it while it ran (0010_flow_requeue_running)
    sa.Column("script_id", sa.BigInteger),  # its spooled script in job_scripts (0011_job_env_scripts)
    sa.Column("exclusive", sa.Boolean, nullable=False, server_default=sa.false()),  # no other job on its hosts
    sa.Column("options", sa.Text),  # how it starts: the SubmitRequest fields of submission.OPTION_DEFAULTS, JSON
    sa.Column("end_code", sa.String(16)),  # how it ended, one word (DONE, EXIT, RUNLIMIT, ...), beside ``reason``
    sa.Index("ix_jobs_state", "state"),
    sa.Index("ix_jobs_user_state", "user", "state"),
    sa.Index("ix_jobs_head_host", "head_host"),
    sa.Index("ix_jobs_state_pend_category", "state", "pend_category"),
    sa.Index("ix_jobs_state_gate", "state", "gate"),
    sa.Index("ix_jobs_user_name", "user", "name"),
    sa.Index("ix_jobs_array_id", "array_id"),
)

#: Spooled job scripts, one per submission (an array's elements share it), keyed by its first job id:
#: the worker runs this copy, so the submitted file may be deleted once ``xce submit`` returns.
job_scripts = sa.Table(
    "job_scripts",
    metadata,
    sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("user", sa.String(128), nullable=False),
    sa.Column("script", sa.Text, nullable=False),
)

job_history = sa.Table(
    "job_history",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("jobid", sa.BigInteger, nullable=False),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("from_state", sa.String(8)),
    sa.Column("to_state", sa.String(8), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("actor", sa.String(160), nullable=False),
    sa.Index("ix_job_history_jobid", "jobid"),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
)

hosts = sa.Table(
    "hosts",
    metadata,
    sa.Column("name", sa.String(255), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("resources", sa.Text, nullable=False),
    sa.Column("load", sa.Text, nullable=False),
    sa.Column("registered", sa.BigInteger, nullable=False),
    sa.Column("last_seen", sa.BigInteger, nullable=False),
    sa.Column("containment", sa.String(32)),
    sa.Column("closed", sa.Text),
    # JSON list: the features its worker registered with (``xce worker --feature``).
    sa.Column("features", sa.Text),
)

actions = sa.Table(
    "actions",
    metadata,
    sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("jobid", sa.BigInteger, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("created", sa.BigInteger, nullable=False),
    sa.Column("delivered", sa.BigInteger),
    sa.Index("ix_actions_host", "host", "id"),
)

decisions = sa.Table(
    "decisions",
    metadata,
    sa.Column("id", sa.String(128), primary_key=True),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("applied", sa.BigInteger, nullable=False),
    sa.Column("outcome", sa.Text, nullable=False),
    sa.Index("ix_decisions_applied", "applied"),
)

control = sa.Table(
    "control",
    metadata,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("command", sa.Text, nullable=False),
)

meta = sa.Table(
    "meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

#: One row per finished job and resource: what it declared against what was measured. Written when
#: the job ends, so the drift report reads finished runs without parsing each job's request and
#: usage again; the declared figure is the one in force when the job ran.
job_accounting = sa.Table(
    "job_accounting",
    metadata,
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
    sa.Index("ix_job_accounting_type", "job_type", "resource"),
)

#: Issued API tokens (:mod:`xce.controller.auth.token_store`). Only the SHA-256 of a token's secret is
#: stored; ``revoked`` and ``expires`` are epoch nanoseconds.
api_tokens = sa.Table(
    "api_tokens",
    metadata,
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

#: The leadership lease of several controllers sharing one PostgreSQL database: one row (id 1). A
#: controller leads while it holds ``term``; taking over increments it, and every write transaction
#: of the leader first reads the row ``FOR SHARE`` and checks its term (the fence), so a deposed
#: leader's transaction either commits before the takeover or fails. ``expires`` is on the
#: database's clock (microseconds since the epoch), so controllers' clocks never matter.
leadership = sa.Table(
    "leadership",
    metadata,
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

#: Submissions already applied, by the client's ``Idempotency-Key``: a submission retried after a
#: failover (the leader died after committing, before answering) returns the jobs it created the
#: first time instead of creating them again. Pruned after a day, like decision ids.
submit_keys = sa.Table(
    "submit_keys",
    metadata,
    sa.Column("user", sa.String(128), primary_key=True),
    sa.Column("key", sa.String(128), primary_key=True),
    sa.Column("jobid", sa.BigInteger, nullable=False),
    sa.Column("count", sa.Integer, nullable=False),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Index("ix_submit_keys_ts", "ts"),
)
