"""The API's interactive documentation, ``/docs`` (Swagger UI) and ``/redoc``, served offline.

FastAPI's own pages load Swagger UI and ReDoc from a public CDN, so on an air-gapped cluster (most
HPC sites) they come up blank. The ``fastapi-offline`` package ships the same bundles (MIT, like
Swagger UI and ReDoc themselves; their licence notices are inside the bundles) and builds the app
with pages pointing at them; here its assets are served under ``/docs/assets``. Swagger UI's
online validator badge is switched off: it would send the spec's address to a public service.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

ASSETS_URL = "/docs/assets"


def make_app(**kwargs: Any) -> FastAPI:
    """A FastAPI application whose ``/docs`` and ``/redoc`` need nothing but this controller."""
    return FastAPIOffline(static_url=ASSETS_URL, swagger_ui_parameters={"validatorUrl": None}, **kwargs)
