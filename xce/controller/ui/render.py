"""Turning page data into HTML: the Jinja2 environment, its formatting filters, and the headers
every dashboard response carries.

A page asked for with ``X-XCE-Fragment: 1`` (the in-place refresh of ``static/ui.js``) gets only
its ``live`` block, rendered from the same template and data as the full page, so a refreshed page
cannot differ from a reloaded one.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from xce import formats
from xce.controller.ui import charts, session
from xce.core.reasons import format_quantity

#: Pages load scripts, styles and images from the controller only; no inline script can run.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
#: Seconds between two in-place refreshes of a page.
REFRESH_S = 2

def human_bytes(n: Any) -> str:
    """Memory as everywhere else (:func:`xce.formats.size`: ``1.5G``, pasteable into ``-R``)."""
    return formats.size(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else "–"


when = formats.zoned
duration = formats.in_words


def span(start_ns: int | None, end_ns: int | None) -> str:
    if not start_ns:
        return "–"
    return duration(((end_ns or time.time_ns()) - start_ns) / 1e9)


def cpu_ms(amount: Any) -> str:
    """CPU time to the millisecond below a minute (``0.950 s``), then as a duration."""
    if not isinstance(amount, (int, float)) or isinstance(amount, bool):
        return "–"
    return f"{amount / 1000:.3f} s" if amount < 60_000 else duration(amount / 1000)


def quantity(amount: Any, resource: str = "") -> str:
    if isinstance(amount, (list, tuple)):  # a host's features
        return " ".join(map(str, amount))
    if isinstance(amount, bool) or not isinstance(amount, (int, float)):
        return str(amount)
    if resource in ("mem", "maxmem", "swp", "memory_rss", "mem_peak") or resource.endswith("memory-bytes"):
        return human_bytes(amount)
    if resource in ("cpu_ms", "cpu_user_ms", "cpu_sys_ms"):
        return cpu_ms(amount)
    if isinstance(amount, float):
        return f"{amount:g}"
    return format_quantity(resource, amount)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("xce.controller.ui", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(bytes=human_bytes, when=when, duration=duration, quantity=quantity, span=span,
                       seg=lambda v: quote(str(v), safe=""))
    env.globals.update(line_chart=charts.line_chart, human_bytes=human_bytes, cores=lambda v: f"{v:.2f}")
    return env


ENV = _env()


def is_fragment(request: Request) -> bool:
    return request.headers.get("x-xce-fragment") == "1"


def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    ctl = request.app.state.ctl
    ctx.setdefault("viewer", None)
    ctx.setdefault("message", None)
    ctx.update(cluster=ctl.config.cluster_name, path=request.url.path, refresh=REFRESH_S,
               csrf=session.csrf(request) if ctx["viewer"] is not None else "")
    t = ENV.get_template(template)
    if is_fragment(request) and "live" in t.blocks:
        html = "".join(t.blocks["live"](t.new_context(ctx)))
    else:
        html = t.render(ctx)
    return HTMLResponse(html, status_code=status, headers=HEADERS)
