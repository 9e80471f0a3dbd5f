"""Reading a replay file as a stream of checked records.

Every problem a person could meet (a truncated copy, a hand edit gone wrong, a file from a newer
scheduler) raises ``ReplayFileError`` naming the file, the 1-based line and what was wrong, so the
fix is one editor jump away. A configuration-hash mismatch only warns: the events still replay,
the person just learns that the file was spliced or edited.

Speed matters (recordings of a million events and more): lines are read as
bytes and decoded with orjson, 3-4x faster than ``json.loads``; a line orjson refuses is decoded
again with ``json`` so that the message (and what it accepts: NaN, huge integers) stays the
standard library's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import orjson

from xce.core import events as ev
from xce.replay import format as fmt

EVENT = "EVENT"
_EMPTY: dict[str, Any] = {}
#: Logical time is int64 nanoseconds everywhere (the core's clock, the database).
MAX_TS = 2**63 - 1


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:20]} is out of range for a number")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(text: str) -> Any:
    """``json.loads`` that refuses NaN, Infinity and numbers too large to be finite."""
    return json.loads(text, parse_float=_finite, parse_constant=_no_constant)


class ReplayFileError(ValueError):
    def __init__(self, path: str | os.PathLike, lineno: int, problem: str) -> None:
        self.path = str(path)
        self.lineno = lineno
        self.problem = problem
        super().__init__(f"{self.path}:{lineno}: {problem}")


@dataclass(slots=True)
class Header:
    version: str
    config_hash: str
    start_ts: int
    start_wall: str
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Record:
    """One non-header line: ``kind`` is SNAPSHOT, DECISION or EVENT; ``item`` the snapshot data,
    the decision payload, or the parsed ``Event``."""

    kind: str
    lineno: int
    ts: int
    item: Any


def _known() -> str:
    return ", ".join(fmt.LINE_TYPES)


class ReplayReader:
    """Iterate records of ``path``; ``header`` is set once the first line is read.

    ``require_header=False`` reads a what-if event file, which may be bare events.
    """

    def __init__(self, path: str | os.PathLike, *, require_header: bool = True) -> None:
        self.path = os.fspath(path)
        self.require_header = require_header
        self.header: Header | None = None
        self.warnings: list[str] = []
        self.lines = 0

    def _error(self, lineno: int, problem: str) -> ReplayFileError:
        return ReplayFileError(self.path, lineno, problem)

    def _ts(self, lineno: int, kind: str, obj: dict[str, Any], last: int) -> int:
        ts = obj.get("ts")
        if type(ts) is not int or ts < 0:
            raise self._error(lineno, f"{kind}: 'ts' must be a non-negative integer of nanoseconds, got {ts!r}")
        if ts > MAX_TS:
            raise self._error(lineno, f"{kind}: 'ts' {ts} is out of range (at most {MAX_TS} ns, the year 2262)")
        if ts < last:
            raise self._error(lineno, f"{kind}: ts {ts} ({fmt.iso_ns(ts)}) goes backwards: an earlier line "
                                      f"has ts {last} ({fmt.iso_ns(last)}); logical time must never decrease")
        return ts

    def _header(self, lineno: int, obj: dict[str, Any]) -> Header:
        version = obj.get("version")
        parts = str(version).split(".")
        if not isinstance(version, str) or len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise self._error(lineno, f"HEADER: 'version' must look like 1.0.0, got {version!r}")
        if int(parts[0]) != fmt.MAJOR:
            raise self._error(lineno, f"HEADER: replay file version {version} is not supported "
                                      f"(this reader handles {fmt.MAJOR}.x.y; it writes {fmt.VERSION})")
        start_ts = obj.get("start_ts", 0)
        if type(start_ts) is not int or start_ts < 0:
            raise self._error(lineno, f"HEADER: 'start_ts' must be a non-negative integer, got {start_ts!r}")
        chash = obj.get("config_hash")
        if not isinstance(chash, str):
            raise self._error(lineno, f"HEADER: 'config_hash' must be a sha256 hex string, got {chash!r}")
        return Header(version, chash, start_ts, str(obj.get("start_wall", "")), obj)

    def _decode(self, lineno: int, raw: bytes) -> Any:
        """The slow path for a line orjson refused (or read differently): the standard library's verdict
        and message, with NaN, Infinity and out-of-range numbers refused."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(lineno, f"not UTF-8 text (byte {exc.start + 1} of the line): a replay file is JSON "
                                      "lines; is this the right file?") from None
        try:
            return _loads(text)
        except json.JSONDecodeError as exc:
            if not text.endswith("\n"):
                raise self._error(lineno, f"truncated line: the file ends in the middle of a JSON "
                                          f"object ({exc.msg} at column {exc.colno})") from None
            raise self._error(lineno, f"corrupt JSON: {exc.msg} at column {exc.colno}") from None
        except RecursionError:
            raise self._error(lineno, "JSON nested too deep: no replay line nests more than a few "
                                      "levels") from None
        except ValueError as exc:  # a number json cannot (or must not) turn into a value
            why = "a number with thousands of digits" if "digits" in str(exc) else str(exc)
            raise self._error(lineno, f"bad number: {why}") from None

    def __iter__(self) -> Iterator[Record]:
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        event_types = ev.EVENT_TYPES
        # kind -> the event's own builder: ``from_parts`` less its checks, done inline below.
        builders = {kind: cls._from_payload for kind, cls in event_types.items()}
        from_parts = ev.from_parts
        format_error = ev.EventFormatError
        bad_payload = (KeyError, TypeError, ValueError)
        last = 0
        first = True
        expected_hash: str | None = None
        with open(self.path, "rb") as fp:
            for lineno, raw in enumerate(fp, 1):
                self.lines = lineno
                try:
                    obj = loads(raw)
                except decode_error:
                    if not raw.strip():
                        continue
                    obj = self._decode(lineno, raw)
                else:
                    # orjson reads an integer beyond 64 bits as a float: let json read the line, so that
                    # an out-of-range time is reported as such.
                    if type(obj) is dict and type(obj.get("ts")) is float:
                        obj = self._decode(lineno, raw)
                if type(obj) is not dict:
                    raise self._error(lineno, f"expected a JSON object, got {type(obj).__name__}")
                kind = obj.get("type")
                if first:
                    first = False
                    if kind == fmt.HEADER:
                        self.header = self._header(lineno, obj)
                        last = self.header.start_ts
                        expected_hash = self.header.config_hash
                        continue
                    if self.require_header:
                        raise self._error(lineno, f"missing HEADER: the first line must be a HEADER line "
                                                  f"(it is {kind!r})")
                build = builders.get(kind)
                if build is not None:
                    ts = obj.get("ts")
                    if type(ts) is not int or ts < last or ts > MAX_TS:
                        ts = self._ts(lineno, kind, obj, last)  # raises with the precise problem
                    payload = obj.get("payload", _EMPTY)
                    try:
                        if type(payload) is dict:
                            try:  # what ``from_parts`` does, without a call per line
                                event = build(ts, payload)
                            except format_error:
                                raise
                            except bad_payload as exc:
                                raise format_error(f"{kind}: bad payload: {exc}") from exc
                        else:
                            event = from_parts(event_types[kind], ts, payload)  # raises
                    except format_error as exc:
                        raise self._error(lineno, str(exc)) from None
                    last = ts
                    if kind == "CONFIG_PUSH" and expected_hash is not None:
                        expected_hash = fmt.config_hash(event.config.to_json())
                    yield Record(EVENT, lineno, ts, event)
                elif kind == fmt.DECISION:
                    ts = self._ts(lineno, kind, obj, last)
                    payload = obj.get("payload")
                    if type(payload) is not dict or "op" not in payload:
                        raise self._error(lineno, "DECISION: 'payload' must be an object with an 'op'")
                    yield Record(kind, lineno, ts, payload)
                elif kind == fmt.SNAPSHOT:
                    ts = self._ts(lineno, kind, obj, last)
                    data = obj.get("data")
                    if type(data) is not dict or not data:
                        raise self._error(lineno, "SNAPSHOT without data: 'data' must be the core state object")
                    if expected_hash is not None and "config" in data:
                        got = fmt.config_hash(data["config"])
                        if got != expected_hash:
                            self.warnings.append(
                                f"{self.path}:{lineno}: warning: SNAPSHOT configuration hash {got[:12]}... does "
                                f"not match the HEADER config_hash {expected_hash[:12]}... (or the last "
                                "CONFIG_PUSH): the file may have been edited or spliced; replaying anyway")
                    last = ts
                    yield Record(kind, lineno, ts, data)
                elif kind == fmt.HEADER:
                    raise self._error(lineno, "a second HEADER line: only the first line may be a HEADER")
                else:
                    raise self._error(lineno, f"unknown line type {kind!r} (expected one of {_known()})")
