"""The Markdown configuration reference, generated from the schema.

Hand-written references drift from the code within a release; this one is rendered from the
pydantic models in :mod:`xce.config.schema` (descriptions, types, defaults, bounds), and a test
fails when the checked-in copy no longer matches. Regenerate it with::

    python -m xce.config.reference > docs/reference/configuration.md
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from xce.config.schema import ClusterConfig, format_path

REGENERATE = "python -m xce.config.reference > docs/reference/configuration.md"

#: How a table's per-name key is spelled in headers; resource names need quotes in TOML.
_PLACEHOLDERS = {"shared_resources": '"<domain>/<name>"'}


@dataclass(frozen=True, slots=True)
class Section:
    """One kind of TOML table in the file, as an operator writes its header.

    The loader uses these too, to say where a misplaced key belongs.
    """

    header: str
    path: tuple[str, ...]
    model: type[BaseModel]


def unwrap_optional(tp: Any) -> Any:
    """``X | None`` to ``X``: TOML has no null, so an optional key is simply one that may be left out."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def sections() -> list[Section]:
    """Every table kind in schema order, the top level first."""
    out = [Section("top level", (), ClusterConfig)]

    def walk(model: type[BaseModel], path: tuple[str, ...]) -> None:
        for name, field in model.model_fields.items():
            tp = unwrap_optional(field.annotation)
            here = path + (name,)
            if _is_model(tp):
                out.append(Section(f"[{format_path(here)}]", here, tp))
                walk(tp, here)
            elif get_origin(tp) is dict and _is_model(get_args(tp)[1]):
                value = get_args(tp)[1]
                placeholder = _PLACEHOLDERS.get(name, "<name>")
                out.append(Section(f"[{format_path(here)}.{placeholder}]", here, value))
                walk(value, here + (placeholder,))

    walk(ClusterConfig, ())
    return out


def type_name(tp: Any) -> str:
    """The TOML spelling of a field type, since operators think in TOML, not Python."""
    tp = unwrap_optional(tp)
    origin = get_origin(tp)
    if origin is Literal:
        return "string"
    if origin is list:
        return f"array of {type_name(get_args(tp)[0])}s"
    if origin is dict:
        value = get_args(tp)[1]
        if _is_model(value):
            return "table of tables, one per name"
        return f"table of {type_name(value)}s"
    if _is_model(tp):
        return "table"
    return {str: "string", int: "integer", float: "float", bool: "boolean"}.get(tp, getattr(tp, "__name__", str(tp)))


def toml_value(value: Any) -> str:
    """A default as it would be written in the file."""
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{format_path((str(k),))} = {toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    return f"`{toml_value(value)}`"


def _constraints(field: FieldInfo) -> str:
    parts: list[str] = []
    tp = unwrap_optional(field.annotation)
    if get_origin(tp) is Literal:
        parts.append("one of " + ", ".join(f"`{toml_value(v)}`" for v in get_args(tp)))
    for meta in field.metadata:
        for attr, op in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            if isinstance(meta, getattr(annotated_types, attr.capitalize())):
                parts.append(f"{op} {getattr(meta, attr)}")
        if isinstance(meta, annotated_types.MinLen):
            parts.append(f"at least {meta.min_length} long")
        if isinstance(meta, annotated_types.MaxLen):
            parts.append(f"at most {meta.max_length} long")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _section_markdown(section: Section, by_path: dict[tuple[str, ...], Section]) -> list[str]:
    title = "Top level" if not section.path else f"`{section.header}`"
    doc = " ".join((section.model.__doc__ or "").split()).replace("``", "`")
    lines = [f"## {title}", ""]
    if doc:
        lines += [doc, ""]
    lines += ["| Key | Type | Default | Constraints | Description |", "| --- | --- | --- | --- | --- |"]
    for name, field in section.model.model_fields.items():
        description = field.description or ""
        sub = by_path.get(section.path + (name,))
        if sub is not None:
            description = f"{description} See `{sub.header}` below.".strip()
        lines.append(
            f"| `{name}` | {type_name(field.annotation)} | {_default(field)} | {_cell(_constraints(field))} "
            f"| {_cell(description)} |"
        )
    return lines + [""]


def render() -> str:
    """The whole reference page; deterministic, so the staleness test can compare it byte for byte."""
    all_sections = sections()
    by_path = {s.path: s for s in all_sections if s.path}
    lines = [
        "# Configuration reference",
        "",
        f"<!-- Generated from xce/config/schema.py by `{REGENERATE}`. Do not edit by hand. -->",
        "",
        "XCE reads its cluster configuration from one TOML file, `xce.toml`. The controller, the scheduler and",
        "the simulator all read the same file. Check a file without starting anything:",
        "",
        "```",
        "xce config check xce.toml",
        "```",
        "",
        "Annotated examples live in `examples/` (`laptop.toml`, `preemption.toml`, `licenses.toml`).",
        "",
        "Rules that hold everywhere:",
        "",
        "- An unknown key is an error, never ignored: a misspelt policy key must not silently fall back to a default.",
        "- Values are checked strictly: `priority = \"50\"` is an error, write `priority = 50`.",
        "  A float key accepts a whole number (`round_interval_s = 1`).",
        "- Top-level keys must come before the first `[table]` header, as TOML requires.",
        "- Names that refer to other parts of the file must exist there: `default_queue`,",
        "  `preemptible_queues`, `project_name`.",
        "- Picker and preemption policy names must be registered plugins (builtin: `builtin_fcfs`,",
        "  `lowest_priority_first`; others come from the `xce.pickers` and `xce.preempt_policies` entry points).",
        "- Shared resource names are domain-prefixed, the domain contains a dot, and `xce.io/` is reserved for XCE.",
        "",
        "Sections:",
        "",
    ]
    for s in all_sections:
        title = "top level" if not s.path else f"`{s.header}`"
        lines.append(f"- {title}: {_cell(s.model.__doc__ or '').replace('``', '`')}")
    lines.append("")
    for section in all_sections:
        lines += _section_markdown(section, by_path)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
