"""The controller: the cluster's authoritative state, its store, the REST API and its security.

Kept import-free on purpose: the CLI imports :mod:`xce.client.statedir` and
:mod:`xce.controller.auth.tokens` in short-lived processes and must not pay for FastAPI or SQLAlchemy.
"""
