"""Refusals the controller's domain code raises, independent of HTTP.

The API maps each to its status code (:mod:`xce.controller.api.errors`); field errors use
FastAPI's own 422 shape so a client parses one format whether pydantic or the controller
found the problem: ``{"detail": [{"loc": ["body", "tasks"], "msg": "...", "type": "..."}]}``.
"""

from __future__ import annotations

from typing import Any


class FieldErrors(Exception):
    """One or more fields are wrong (HTTP 422); each entry names its location and what was expected."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors))
        self.errors = errors

    @classmethod
    def one(cls, loc: tuple[str | int, ...] | list[str | int], msg: str, type_: str = "value_error",
            **ctx: Any) -> "FieldErrors":
        return cls([field_error(loc, msg, type_, **ctx)])


def field_error(loc, msg: str, type_: str = "value_error", **ctx: Any) -> dict[str, Any]:
    err: dict[str, Any] = {"loc": list(loc), "msg": msg, "type": type_}
    if ctx:
        err["ctx"] = ctx
    return err


class Conflict(Exception):
    """The request is well-formed but the cluster's current state forbids it (HTTP 409)."""


class Forbidden(Exception):
    """The caller may not do this (HTTP 403)."""


class NotFound(Exception):
    """No such job, host or resource (HTTP 404)."""


class Gone(Exception):
    """What the caller asks for was pruned; it must resynchronise (HTTP 410)."""
