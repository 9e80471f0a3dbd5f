"""JSON for short-lived client processes: the standard library's own C codec, without ``import json``.

Why: ``import json`` compiles the regular expressions of its pure-Python fallback, so it imports
``re`` (and with it ``enum`` and ``functools``): 3 ms on a quick machine and 16 ms on a slow one,
more than everything else ``xce submit`` does between the interpreter's start and its exit. The
scanner and encoder the ``json`` package itself uses are in the C module ``_json`` and need none
of that. Output is compact (no spaces) and ASCII; input is what ``json.loads`` accepts from a
``str`` or UTF-8 ``bytes``. Where ``_json`` is missing (another Python), the ``json`` package does it.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoding:
    """The settings ``_json.make_scanner`` reads, as those of a default ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _unknown(obj):
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


if _json is not None:
    _scan = _json.make_scanner(_Decoding())
    _encode = _json.make_encoder({}, _unknown, _json.encode_basestring_ascii, None, ":", ",", False, False, True)

    def loads(text: str | bytes):
        """The value of one JSON document; ``json.JSONDecodeError`` (a ValueError) when ``text`` is
        not exactly one. The C scanner reports malformed input only once ``json.decoder`` is
        imported, so malformed input goes to ``json.loads``, which says what is wrong and where."""
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        stripped = text.strip(" \t\n\r")
        try:
            value, end = _scan(stripped, 0)
        except (StopIteration, SystemError, ValueError):
            end = -1
        if end != len(stripped):
            import json

            return json.loads(text)
        return value

    def dumps(obj) -> str:
        """Compact ASCII JSON of dicts, lists, tuples, strings, numbers, booleans and None;
        TypeError for anything else, ValueError for a reference cycle."""
        return "".join(_encode(obj, 0))
else:  # pragma: no cover
    import json as _std

    def loads(text: str | bytes):
        return _std.loads(text)

    def dumps(obj) -> str:
        return _std.dumps(obj, separators=(",", ":"))
