"""The API's interactive documentation, ``/docs`` (Swagger UI) and ``/redoc``, served offline.

FastAPI's own pages load Swagger UI and ReDoc from a public CDN, so on an air-gapped cluster (most
HPC sites) they come up blank. The ``fastapi-offline`` package ships the same bundles (MIT, like
Swagger UI and ReDoc themselves; their licence notices are inside the bundles) and builds the app
with pages pointing at them; here its assets are served under ``/docs/assets``. Swagger UI's
online validator badge is switched off: it would send the spec's address to a public service.

The two pages also carry a content security policy that admits this controller only: ReDoc's
sidebar shows a logo from its vendor's CDN, and the policy stops the browser from fetching it (the
logo then simply does not show), as it would stop anything a future bundle tried to load.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

ASSETS_URL = "/docs/assets"
PAGES = (b"/docs", b"/redoc")
#: The bundles need inline start-up scripts and styles, and ReDoc a worker from a blob.
CSP = (b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       b"img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
       b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


def make_app(**kwargs: Any) -> FastAPI:
    """A FastAPI application whose ``/docs`` and ``/redoc`` need nothing but this controller."""
    return FastAPIOffline(static_url=ASSETS_URL, swagger_ui_parameters={"validatorUrl": None}, **kwargs)


class DocsPolicy:
    """ASGI middleware adding :data:`CSP` to the two documentation pages."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("raw_path", scope["path"].encode()).rstrip(b"/") not in PAGES:
            await self.app(scope, receive, send)
            return

        async def with_policy(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"content-security-policy", CSP)]
            await send(message)

        await self.app(scope, receive, with_policy)
