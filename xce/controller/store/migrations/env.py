"""Alembic environment: runs against the connection the controller hands in (never a URL of its own)."""

from __future__ import annotations

from alembic import context

from xce.controller.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through xce.controller.store.migrate.upgrade(engine)")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
