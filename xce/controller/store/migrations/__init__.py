"""Alembic migration scripts of the controller's store (run by ``xce.controller.store.migrate``)."""
