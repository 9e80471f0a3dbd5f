"""The ``xce`` and ``xceadmin`` command lines (see :mod:`xce.cli.main` for adding commands)."""
