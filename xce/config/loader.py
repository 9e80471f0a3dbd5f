"""Reading ``xce.toml`` into a :class:`~xce.config.schema.ClusterConfig`, with errors an operator can act on.

An operator edits this file by hand, often on a cluster that is down. So every problem is reported
at once (not one per run), each names the file, the line where the loader can find it, the dotted key
path as written in TOML, what was expected and what was there; a misspelt key gets a "did you mean".
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from xce.config.schema import ClusterConfig, format_path, reference_errors

Path = tuple[str | int, ...]

#: Where the core keeps its plugin registries. Looked up lazily: the config package must load (and
#: ``xce config check`` must work) on installs where the core has not been imported or does not have them.
PICKER_REGISTRY = "xce.core.pickers.registry"
PREEMPT_REGISTRY = "xce.core.preempt.registry"


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem in a configuration file; ``line`` and ``column`` are 1-based and best effort."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None

    def render(self, source: str) -> str:
        where = source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if not self.path:
            # Path-less problems (syntax, encoding) state their own position in the message.
            return f"{source}: {self.message}"
        return f"{where}: {self.path}: {self.message}"


class ConfigError(ValueError):
    """Everything wrong with one configuration file, one problem per line of ``str(error)``.

    ``errors`` is the machine-readable form: ``(dotted key path, message)`` pairs, the path empty
    for problems that belong to no key (unreadable file, TOML syntax).
    """

    def __init__(self, source: str, issues: Sequence[ConfigIssue]) -> None:
        self.source = source
        self.issues: list[ConfigIssue] = list(issues)
        self.errors: list[tuple[str, str]] = [(i.path, i.message) for i in self.issues]
        super().__init__("\n".join(i.render(source) for i in self.issues))


def load_config(path: str | os.PathLike[str], *, check_plugins: bool = True) -> ClusterConfig:
    """Read and validate the file at ``path``; raise :class:`ConfigError` naming that path on any problem."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(source, [ConfigIssue("", f"cannot read the file: {exc.strerror or exc}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        issue = ConfigIssue("", f"not UTF-8 text at line {line} (byte {exc.start}); TOML files must be UTF-8", line)
        raise ConfigError(source, [issue]) from None
    return parse_config(text, source, check_plugins=check_plugins)


def parse_config(text: str, source: str = "<string>", *, check_plugins: bool = True) -> ClusterConfig:
    """Validate TOML ``text``; ``source`` is the name errors give for it.

    ``check_plugins=False`` skips the registry look-ups, for checking a file on a machine that lacks
    the site's plugins.
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, [_syntax_issue(str(exc), text)]) from None
    except RecursionError:
        raise ConfigError(source, [_nesting_issue(text)]) from None

    lines = _KeyLines(text)
    try:
        found: list[tuple[Path, str]] = list(_out_of_range(raw, ()))
    except RecursionError:
        raise ConfigError(source, [_nesting_issue(text)]) from None
    cfg: ClusterConfig | None = None
    unplaced: list[str] = []
    try:
        cfg = ClusterConfig.model_validate(raw, strict=True)
    except ValidationError as exc:
        for err in exc.errors():
            if err["loc"]:
                found.append((tuple(err["loc"]), _describe(err)))
            else:
                # A model-level validator: the cross-checks below say the same with a key path.
                unplaced.append(str(err["msg"]).removeprefix("Value error, "))
    if cfg is None:
        cross = reference_errors(raw)
        found += cross
        if unplaced and not cross:
            found += [((), msg) for msg in unplaced]
    if check_plugins:
        found += _plugin_errors(raw)

    if not found and cfg is not None:
        return cfg
    issues = [ConfigIssue(format_path(path), msg, lines.find(path)) for path, msg in found]
    # File order reads best; problems with no line (defaults, absent keys) go last, stable.
    issues.sort(key=lambda i: (i.line is None, i.line or 0, i.path))
    raise ConfigError(source, issues)


def _out_of_range(node: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """TOML integers are 64-bit (the spec says so; tomllib does not check): a larger one is a typo, and
    would overflow the scheduler's counters long after the file was accepted."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _out_of_range(value, (*path, key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from _out_of_range(value, (*path, k))
    elif isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**63:
        shown = str(node) if len(str(node)) <= 30 else str(node)[:27] + "..."
        yield path, f"integer {shown} is out of range (TOML integers are 64-bit)"


# --- TOML syntax --------------------------------------------------------------------------------

_AT_LINE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_AT_END = re.compile(r"\s*\(at end of document\)$")


def _syntax_issue(message: str, text: str) -> ConfigIssue:
    """tomllib (3.11) only puts the position in its message text; lift it out so it can lead the line."""
    if m := _AT_LINE.search(message):
        line, column = int(m.group(1)), int(m.group(2))
        message = message[: m.start()]
    else:
        message = _AT_END.sub("", message)
        all_lines = text.split("\n")
        line, column = len(all_lines), len(all_lines[-1]) + 1
        message += " (reached the end of the file)"
    return ConfigIssue("", f"TOML syntax error at line {line}, column {column}: {message}", line, column)


def _nesting_issue(text: str) -> ConfigIssue:
    """tomllib recurses once per nested array or inline table; a file nested thousands deep is no
    configuration anybody wrote by hand, so say where the nesting starts instead of crashing."""
    depth = best = 0
    where = 0
    for pos, ch in enumerate(text):
        if ch in "[{":
            depth += 1
            if depth > best:
                best, where = depth, pos
        elif ch in "]}":
            depth = max(0, depth - 1)
    line = text.count("\n", 0, where) + 1
    return ConfigIssue("", f"arrays or inline tables nested {best} levels deep at line {line}; "
                           "a configuration needs a few", line)


# --- pydantic errors into operator language -------------------------------------------------------

_TYPE_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "an array",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}
_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}


def _toml_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    if isinstance(value, (datetime, date, time)):
        return "date-time"
    return type(value).__name__


def _shown(value: Any) -> str:
    """What the file held, in TOML words: ``string "5"``, ``integer 0``, ``a table``."""
    kind = _toml_kind(value)
    if kind == "table":
        return "a table"
    if kind == "array":
        return "an array"
    if kind == "boolean":
        return f"boolean {'true' if value else 'false'}"
    if kind == "string":
        # Escaped, so that a value spanning lines still makes a one-line message.
        return f"string {json.dumps(value if len(value) <= 60 else value[:57] + '...', ensure_ascii=False)}"
    return f"{kind} {value}"


def suggest(word: str, choices: Sequence[str]) -> str | None:
    """The likeliest intended choice for a misspelling, or None.

    difflib alone misses abbreviations (``fcfs`` for ``builtin_fcfs``), so a unique substring match
    counts too.
    """
    choices = sorted(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
        close = [lowered[c] for c in close]
    if close:
        return close[0]
    containing = [c for c in choices if word and word.lower() in c.lower()]
    return containing[0] if len(containing) == 1 else None


def _node_at(loc: Path) -> Any:
    """The schema type found at ``loc``, so that messages can list the keys allowed there."""
    # Imported here, not at the top: ``python -m xce.config.reference`` must not find it preloaded.
    from xce.config.reference import unwrap_optional

    node: Any = ClusterConfig
    for part in loc:
        node = unwrap_optional(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            if field is None:
                return None
            node = field.annotation
        elif get_origin(node) is dict:
            node = get_args(node)[1]
        elif get_origin(node) is list:
            node = get_args(node)[0]
        else:
            return None
    return unwrap_optional(node)


def _unknown_key(loc: Path) -> str:
    key = str(loc[-1])
    parent = _node_at(loc[:-1])
    allowed = sorted(parent.model_fields) if isinstance(parent, type) and issubclass(parent, BaseModel) else []
    message = f"unknown key {key!r}"
    guess = suggest(key, allowed)
    if guess:
        return f"{message}; did you mean {guess!r}?"
    from xce.config.reference import sections

    elsewhere = [s.header for s in sections() if key in s.model.model_fields and s.model is not parent]
    if elsewhere:
        message += f"; {key!r} belongs in {' or '.join(elsewhere)}"
    if allowed:
        message += f"; expected one of: {', '.join(allowed)}"
    return message


def _describe(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    loc: Path = tuple(err["loc"])
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        return _unknown_key(loc)
    if kind == "missing":
        expected = _TYPE_EXPECTED.get(_type_error_name(_node_at(loc)))
        return f"required key {str(loc[-1])!r} is missing" + (f"; expected {expected}" if expected else "")
    if kind in _TYPE_EXPECTED:
        return f"expected {_TYPE_EXPECTED[kind]}, got {_shown(value)}"
    if kind in _BOUNDS:
        bound = next(iter(ctx.values()))
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        number = "an integer" if _node_at(loc) is int else "a number"
        return f"expected {number} {_BOUNDS[kind]} {bound}, got {_shown(value)}"
    if kind == "literal_error":
        node = _node_at(loc)
        options = [str(o) for o in get_args(node)] if get_origin(node) is Literal else []
        message = f"expected one of {', '.join(repr(o) for o in options) or ctx.get('expected')}, got {_shown(value)}"
        guess = suggest(str(value), options) if isinstance(value, str) else None
        return f"{message}; did you mean {guess!r}?" if guess else message
    message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return f"{message}, got {_shown(value)}" if "input" in err else message


def _type_error_name(node: Any) -> str:
    if isinstance(node, type) and issubclass(node, BaseModel):
        return "model_type"
    return {int: "int_type", float: "float_type", str: "string_type", bool: "bool_type"}.get(
        node, {list: "list_type", dict: "dict_type"}.get(get_origin(node), "")
    )


# --- plugin names ------------------------------------------------------------------------------


def registered(module_name: str) -> list[str] | None:
    """Names in a core plugin registry, or None when that registry module does not exist.

    Only the registry's own absence is forgiven: a registry that exists but fails to import is a
    broken install and must say so.
    """
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            return None
        raise
    from xce.plugins import load_entry_points

    load_entry_points()  # installed plugins count as registered; their load errors are reported elsewhere
    return sorted(module.available())


def _plugin_uses(raw: Mapping[str, Any]) -> Iterator[tuple[str, Path, str]]:
    """Plugin names written in the file, as (registry, key path, name). Defaults are the core's business."""
    scheduler = raw.get("scheduler")
    if isinstance(scheduler, Mapping) and isinstance(scheduler.get("job_pick_plugin"), str):
        yield PICKER_REGISTRY, ("scheduler", "job_pick_plugin"), scheduler["job_pick_plugin"]
    queues = raw.get("queues")
    if isinstance(queues, Mapping):
        for qname, q in queues.items():
            if not isinstance(q, Mapping):
                continue
            if isinstance(q.get("job_pick_plugin"), str):
                yield PICKER_REGISTRY, ("queues", qname, "job_pick_plugin"), q["job_pick_plugin"]
            if isinstance(q.get("preempt_policy"), str):
                yield PREEMPT_REGISTRY, ("queues", qname, "preempt_policy"), q["preempt_policy"]


_PLUGIN_WORDS = {
    PICKER_REGISTRY: ("job picker", "xce.pickers"),
    PREEMPT_REGISTRY: ("preemption policy", "xce.preempt_policies"),
}


def _plugin_errors(raw: Mapping[str, Any]) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    cache: dict[str, list[str] | None] = {}
    for registry, path, name in _plugin_uses(raw):
        if registry not in cache:
            cache[registry] = registered(registry)
        names = cache[registry]
        if names is None or name in names:
            continue
        what, group = _PLUGIN_WORDS[registry]
        message = f"unknown {what} {name!r}"
        guess = suggest(name, names)
        if guess:
            message += f"; did you mean {guess!r}?"
        listed = ", ".join(names) if names else "none"
        message += f" (registered: {listed}; plugins register under the {group!r} entry point group)"
        found.append((path, message))
    return found


# --- where a key path is written -----------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"((?:[^"\\]|\\.)*)"')
_LITERAL = re.compile(r"'([^']*)'")


def _parse_key(line: str, pos: int) -> tuple[list[str], int] | None:
    """A dotted TOML key starting at ``pos``: its parts and where it ends, or None if there is none."""
    parts: list[str] = []
    while True:
        while pos < len(line) and line[pos] in " \t":
            pos += 1
        for pattern, decode in ((_BARE, None), (_BASIC, "basic"), (_LITERAL, "literal")):
            m = pattern.match(line, pos)
            if m:
                if decode is None:
                    parts.append(m.group(0))
                elif decode == "basic":
                    try:
                        parts.append(tomllib.loads(f"k = {m.group(0)}")["k"])
                    except tomllib.TOMLDecodeError:
                        parts.append(m.group(1))
                else:
                    parts.append(m.group(1))
                pos = m.end()
                break
        else:
            return None
        while pos < len(line) and line[pos] in " \t":
            pos += 1
        if pos < len(line) and line[pos] == ".":
            pos += 1
            continue
        return parts, pos


class _KeyLines:
    """Best-effort map from key paths to the line that writes them.

    tomllib keeps no positions, and an error without a line sends the operator hunting. This reads
    table headers and ``key = value`` lines (skipping multi-line strings); what it cannot place
    (inline tables, keys left at their default) falls back to the nearest enclosing key it found.
    """

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        in_string: str | None = None
        for number, line in enumerate(text.split("\n"), start=1):
            if in_string is not None:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            stripped = line.lstrip()
            if stripped.startswith("["):
                is_array = stripped.startswith("[[")
                parsed = _parse_key(stripped, 2 if is_array else 1)
                if parsed:
                    table = tuple(parsed[0])
                    self._note(table, number)
                continue
            parsed = _parse_key(line, 0)
            if not parsed or not line[parsed[1] :].startswith("="):
                continue
            self._note(table + tuple(parsed[0]), number)
            value = line[parsed[1] + 1 :]
            for quote in ('"""', "'''"):
                if value.count(quote) % 2 == 1:
                    in_string = quote
                    break

    def _note(self, path: tuple[str, ...], number: int) -> None:
        for end in range(1, len(path) + 1):
            self._lines.setdefault(path[:end], number)

    def find(self, path: Path) -> int | None:
        keys = tuple(str(p) for p in path if not isinstance(p, int))
        for end in range(len(keys), 0, -1):
            if keys[:end] in self._lines:
                return self._lines[keys[:end]]
        return None
