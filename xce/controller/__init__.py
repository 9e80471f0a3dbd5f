"""The controller: the cluster's authoritative state, its store, the REST API and its security.

Kept import-free on purpose: the CLI imports :mod:`xce.controller.statedir` and
:mod:`xce.controller.tokens` in short-lived processes and must not pay for FastAPI or SQLAlchemy.
"""
