"""The replay file's vocabulary (Req 10 AC 15), kept in one place so writer and reader agree.

A replay file is JSONL: a HEADER first, SNAPSHOT lines carrying ``core.snapshot()`` in ``data``,
one line per input event (exactly ``event.to_json()``) and DECISION lines for recorded output.
Lines are written compactly; readers accept any key order.
"""

from __future__ import annotations

import calendar
import hashlib
import json
from datetime import datetime, timezone
from typing import Any

import orjson

from xce.core.events import EVENT_TYPES

#: The file format version this build writes; readers accept any 1.x.y.
VERSION = "1.0.0"
MAJOR = 1

HEADER = "HEADER"
SNAPSHOT = "SNAPSHOT"
DECISION = "DECISION"

#: Every ``type`` a line may carry, in the order a person would look for them.
LINE_TYPES: tuple[str, ...] = (HEADER, SNAPSHOT, DECISION, *EVENT_TYPES)

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE


def default_name() -> str:
    """A recording's file name when nobody gave one: when it began, local time, sorted as written."""
    import time

    return f"xce-recording-{time.strftime('%Y%m%dT%H%M%S')}.jsonl"


def line(obj: dict[str, Any]) -> str:
    """One JSONL line (with its newline); compact so a 100,000-event file stays small.

    orjson writes it ~5x faster than ``json``; what orjson refuses (an integer beyond 64 bits)
    goes through ``json``, so every line a core can produce is written.
    """
    try:
        return orjson.dumps(obj, option=_OPTIONS).decode()
    except TypeError:
        return _dumps(obj) + "\n"


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def config_hash(config_json: dict[str, Any]) -> str:
    """sha256 of the canonical configuration JSON, so two files can be checked for compatibility."""
    return hashlib.sha256(canonical_json(config_json).encode()).hexdigest()


def header(config_json: dict[str, Any], start_ts: int, start_wall: datetime | None = None) -> dict[str, Any]:
    wall = start_wall or datetime.now(timezone.utc)
    return {"type": HEADER, "version": VERSION, "config_hash": config_hash(config_json),
            "start_ts": int(start_ts), "start_wall": iso_wall(wall)}


def snapshot(ts: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": SNAPSHOT, "ts": int(ts), "data": data}


def decision(ts: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": DECISION, "ts": int(ts), "payload": payload}


def iso_wall(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ns(ts: int) -> str:
    """A logical time as UTC ISO-8601 with nanoseconds, the way reports print it next to the integer."""
    secs, ns = divmod(int(ts), 1_000_000_000)
    return datetime.fromtimestamp(secs, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{ns:09d}Z"


def parse_ts(text: str | int) -> int:
    """Command-line time: integer nanoseconds, or ISO-8601 (UTC unless it says otherwise)."""
    if isinstance(text, int):
        return text
    s = str(text).strip()
    if s.lstrip("-").isdigit():
        value = int(s)
        if value < 0:
            raise ValueError(f"timestamp must not be negative, got {s}")
        return value
    frac_ns = 0
    body = s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s
    # datetime only keeps microseconds; carry nanoseconds by hand so a time printed by a report
    # (iso_ns) can be pasted back exactly.
    if "." in body:
        head, _, rest = body.partition(".")
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        frac_ns = int((digits + "000000000")[:9]) if digits else 0
        body = head + rest
    try:
        when = datetime.fromisoformat(body)
    except ValueError:
        raise ValueError(f"timestamp {s!r} is neither integer nanoseconds nor ISO-8601 "
                         "(e.g. 2026-07-27T12:00:00Z)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return calendar.timegm(when.utctimetuple()) * 1_000_000_000 + frac_ns
