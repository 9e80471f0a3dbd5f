"""Core log records carry the core's virtual time, never the wall clock (Req 10 AC 3).

The core only creates records; handlers (which write) belong to drivers.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

LOGGER_NAME = "xce.core"


class _VirtualTime(logging.Filter):
    """Rewrites ``created`` from the ``core_now`` the adapter attached (nanoseconds)."""

    def filter(self, record: logging.LogRecord) -> bool:
        now = getattr(record, "core_now", None)
        if now is not None:
            record.created = now / 1e9
            record.msecs = (now // 1_000_000) % 1000
        return True


_logger = logging.getLogger(LOGGER_NAME)
if not any(isinstance(f, _VirtualTime) for f in _logger.filters):
    _logger.addFilter(_VirtualTime())


class CoreLogger(logging.LoggerAdapter):
    def __init__(self, now: Callable[[], int]) -> None:
        super().__init__(_logger, {})
        self._now = now

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        kwargs.setdefault("extra", {})["core_now"] = self._now()
        return msg, kwargs
