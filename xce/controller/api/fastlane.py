"""The requests every job makes, answered without FastAPI's per-request machinery.

Each job costs the controller a few requests (the scheduler's decisions, the worker's action poll
and report), and around each FastAPI spends about 0.4 ms of Python on a 2-CPU machine: matching the
path against every route, solving the dependency tree, validating the parameters one by one. That
was as much as the endpoints' own work. The routes whose endpoint is marked :func:`hot` are still
FastAPI routes (their declaration is the API and its OpenAPI document; FastAPI still answers every
request this lane does not take), but here each runs from a plan made once from the route: the
path's pattern, its path, query and header parameters with their validators, the body's model and
the roles the caller may have.

Only what is well-formed is taken: a parameter or a body that does not validate, a body that is not
JSON, anything else unusual goes on to FastAPI unchanged, so every 422 is FastAPI's own. Who the
caller is is decided by the same function as behind FastAPI (:func:`xce.controller.auth.security.authorize`),
and what the endpoint or that raises goes to the application's exception handlers, as it would
through FastAPI. The lane sits innermost among the application's middleware, which therefore
applies to its requests as to any other (leadership, body limits, hygiene, latency metrics).
``XCE_FAST_LANE=0`` turns it off, for comparing the two.
"""

from __future__ import annotations

import inspect
import logging
import os
from types import UnionType
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin
from urllib.parse import parse_qsl

from fastapi import params
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from xce.controller.auth.security import authorize
from xce.controller.web import asgibody

log = logging.getLogger("xce.controller")
_HOT = "__xce_hot__"


def hot(endpoint: Callable) -> Callable:
    """Mark a route's endpoint for the fast lane. It must return a Response."""
    setattr(endpoint, _HOT, True)
    return endpoint


def enabled() -> bool:
    return os.environ.get("XCE_FAST_LANE", "1") != "0"


class _Param:
    __slots__ = ("name", "key", "adapter", "default", "required")

    def __init__(self, field: Any, key: str) -> None:
        info = field.field_info
        self.name = field.name
        self.key = key
        self.adapter = TypeAdapter(Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation)
        self.required = info.is_required()
        self.default = None if self.required else info.get_default(call_default_factory=True)

    def value(self, raw: str | None) -> Any:
        """The validated value (ValueError when there is none or it does not validate)."""
        if raw is None:
            if self.required:
                raise ValueError(self.key)
            return self.default
        return self.adapter.validate_python(raw)


class _Plan:
    """One hot route, ready to run."""

    def __init__(self, route: APIRoute, principal: str | None, roles: frozenset[str] | None) -> None:
        d = route.dependant
        self.route = route
        self.methods = route.methods
        self.regex = route.path_regex
        self.convertors = route.param_convertors
        self.call = route.endpoint
        self.request_name = d.request_param_name
        self.principal, self.roles = principal, roles
        self.path = [_Param(f, f.alias) for f in d.path_params]
        self.query = [_Param(f, f.alias) for f in d.query_params]
        # Header names as FastAPI reads them: underscores become hyphens, lower case.
        self.headers = [_Param(f, (f.alias.replace("_", "-") if getattr(f.field_info, "convert_underscores", True)
                                   else f.alias).lower()) for f in d.header_params]
        body = d.body_params[0] if d.body_params else None
        self.body_name = body.name if body is not None else None
        self.body_model: type[BaseModel] | None = body.field_info.annotation if body is not None else None

    def values(self, scope: dict[str, Any], path_params: dict[str, Any], body: bytes) -> dict[str, Any]:
        """The endpoint's arguments but the caller; ValueError (ValidationError is one) when anything
        is missing or does not validate: FastAPI then says what."""
        out: dict[str, Any] = {}
        for p in self.path:
            out[p.name] = p.value(path_params.get(p.key))
        if self.query:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
            for p in self.query:
                out[p.name] = p.value(query.get(p.key))
        if self.headers:
            headers: dict[str, str] = {}
            for k, v in scope["headers"]:  # the first of a repeated header, as Starlette reads them
                headers.setdefault(k.decode("latin-1"), v.decode("latin-1"))
            for p in self.headers:
                out[p.name] = p.value(headers.get(p.key))
        if self.body_model is not None:
            if not body:
                raise ValueError("no body")
            out[self.body_name] = self.body_model.model_validate_json(body)
        return out


def _plan(route: Any) -> _Plan | None:
    """A plan for ``route`` when it is hot and has only the shapes planned for, else None."""
    if not isinstance(route, APIRoute) or not getattr(route.endpoint, _HOT, False):
        return None
    d = route.dependant
    if (d.cookie_params or len(d.body_params) > 1 or not inspect.iscoroutinefunction(route.endpoint)
            or any(getattr(d, name, None) for name in ("websocket_param_name", "http_connection_param_name",
                                                       "response_param_name", "background_tasks_param_name",
                                                       "security_scopes_param_name"))):
        return None
    if d.body_params:
        info = d.body_params[0].field_info
        model = info.annotation
        if getattr(info, "embed", False) or not (isinstance(model, type) and issubclass(model, BaseModel)) \
                or not isinstance(info, params.Body):
            return None
    if not all(_scalar(f.field_info.annotation) for f in (*d.path_params, *d.query_params, *d.header_params)):
        return None  # lists, parameter models: FastAPI's
    principal = roles = None
    for sub in d.dependencies:  # only the role dependencies of xce.controller.auth.security.require
        if getattr(sub.call, "roles", None) is None or principal is not None:
            return None
        principal, roles = sub.name, sub.call.roles
    return _Plan(route, principal, roles)


class FastLane:
    """ASGI middleware: hot routes run from their plans, everything else goes on to ``app``."""

    def __init__(self, app: Any, api: Any) -> None:
        self.app = app
        self.api = api  # the FastAPI application: its routes and exception handlers
        self._plans: list[_Plan] | None = None

    def plans(self) -> list[_Plan]:
        if self._plans is None:
            self._plans = []
            for route in _routes(self.api.routes) if enabled() else ():
                try:
                    plan = _plan(route)
                except Exception:  # noqa: BLE001 - a route this FastAPI declares otherwise: FastAPI's to run
                    log.warning("fast lane: no plan for %s; FastAPI answers it", getattr(route, "path", route),
                                exc_info=True)
                    continue
                if plan is not None:
                    self._plans.append(plan)
        return self._plans

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for plan in self.plans():
            if scope["method"] in plan.methods:
                match = plan.regex.match(scope["path"])
                if match is not None:
                    await self._run(plan, match, scope, receive, send)
                    return
        await self.app(scope, receive, send)

    async def _run(self, plan: _Plan, match: Any, scope, receive, send) -> None:
        messages, body = await asgibody.read(receive) if plan.body_model is not None else ([], b"")
        again = asgibody.replaying(messages, receive)
        try:
            path_params = {k: plan.convertors[k].convert(v) for k, v in match.groupdict().items()}
            if plan.body_model is not None and not _is_json(scope):
                raise ValueError("not JSON")
            values = plan.values(scope, path_params, body)
        except (ValueError, ValidationError):
            await self.app(scope, again, send)  # FastAPI says what is wrong
            return
        scope["path_params"] = path_params
        scope["route"] = plan.route  # the route's template labels its latency (xce.controller.records.metrics)
        scope["endpoint"] = plan.call
        request = Request(scope, again, send)
        try:
            if plan.principal is not None:
                values[plan.principal] = await authorize(request, plan.roles)
            if plan.request_name is not None:
                values[plan.request_name] = request
            response = await plan.call(**values)
        except Exception as exc:  # what FastAPI's exception middleware would have done with it
            response = await self._handled(request, exc)
        if not isinstance(response, Response):
            raise TypeError(f"hot endpoint {plan.call.__name__} must return a Response, not {type(response).__name__}")
        await response(scope, again, send)

    async def _handled(self, request: Request, exc: Exception) -> Response:
        handlers = self.api.exception_handlers
        for cls in type(exc).__mro__:
            handler = handlers.get(cls)
            if handler is not None:
                response = handler(request, exc)
                return await response if inspect.isawaitable(response) else response
        raise exc


def _routes(routes: list[Any]):
    """Every route, those of included routers too (kept apart by FastAPI 0.13x and later) where the
    include added nothing to them (no prefix, no dependencies): their own path and dependencies are
    then what FastAPI runs."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is None:
            yield route
            continue
        context = getattr(route, "include_context", None)
        if context is not None and not getattr(context, "prefix", "") and not getattr(context, "dependencies", ()):
            yield from _routes(included.routes)


def _scalar(annotation: Any) -> bool:
    """One value per parameter: a plain type, a Literal, or an optional one of those."""
    if annotation in (int, float, str, bool):
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return True
    if origin in (Union, UnionType):
        return all(a is type(None) or _scalar(a) for a in get_args(annotation))
    return False


def _is_json(scope: dict[str, Any]) -> bool:
    """The body is JSON as FastAPI judges it: ``application/json`` or ``application/*+json``."""
    for k, v in scope["headers"]:
        if k == b"content-type":
            kind = v.split(b";", 1)[0].strip().lower()
            return kind == b"application/json" or (kind.startswith(b"application/") and kind.endswith(b"+json"))
    return False
