"""The REST API under ``/v1``: one router module per audience (jobs, cluster views, scheduler,
workers, admin). Handlers are thin: they authenticate, call the domain module, and shape JSON."""
