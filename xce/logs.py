"""Log lines for people and for machines, the same in every XCE service.

Every service (controller, scheduler, worker, the ``xce up`` supervisor) calls :func:`configure`
once. Two formats:

* ``text`` (default): ``2026-01-05T10:00:00.123Z controller INFO job 12 PEND -> RUN: dispatched``
* ``json``: one object per line, ``{"ts", "level", "process", "pid", "logger", "msg", ...}`` plus the
  structured fields a message carries (``extra={"fields": {...}}``: job id, states, figures), so a
  log shipper can index them without parsing sentences.

What goes at which level, so that an operator can pick one:

* DEBUG: one line per scheduling round with its figures; each decision applied;
* INFO: every job state change, submissions, workers registering, recording started/stopped;
* WARNING: a worker or the scheduler lost (and back), leadership changes, processes restarted by
  ``xce up``, a controller unreachable;
* ERROR: something failed that an operator must fix (a recording path that cannot be written).

Why not a library: the standard ``logging`` module does everything here but the JSON line, which is
one ``json.dumps``; a dependency would not make it shorter.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, TextIO

from xce.formats import utc_millisecond

FORMATS = ("text", "json")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class TextFormatter(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:
        line = f"{utc_millisecond(record.created)} {self.process} {record.levelname} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:
        obj: dict[str, Any] = {"ts": utc_millisecond(record.created), "level": record.levelname, "process": self.process,
                               "pid": record.process, "logger": record.name, "msg": record.getMessage()}
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for k, v in fields.items():
                obj.setdefault(k, v)
        if record.exc_info:
            obj["exc"] = self.formatException(record.exc_info)
        return json.dumps(obj, default=str, separators=(",", ":"))


def check(level: str, fmt: str) -> str | None:
    """A one-line problem with ``level`` or ``fmt``, or None."""
    if level.upper() not in LEVELS:
        return f"unknown log level {level!r} (expected one of {', '.join(LEVELS)})"
    if fmt not in FORMATS:
        return f"unknown log format {fmt!r} (expected one of {', '.join(FORMATS)})"
    return None


def configure(process: str, level: str = "INFO", fmt: str | None = None, stream: TextIO | None = None) -> None:
    """Route every logger of this process to ``stream`` (stderr) in ``fmt`` (default ``$XCE_LOG_FORMAT``,
    else text). Libraries' chatter (uvicorn's access log, asyncio, alembic) stays at WARNING."""
    fmt = fmt or os.environ.get("XCE_LOG_FORMAT") or "text"
    problem = check(level, fmt)
    if problem:
        raise ValueError(problem)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(process) if fmt == "json" else TextFormatter(process))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("uvicorn.access", "asyncio", "alembic"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
