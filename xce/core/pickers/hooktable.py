"""The plugin guide's hook table, rendered from the contract's declarations (``base``), so that the
guide lists exactly the hooks the core calls; ``tests/core/test_picker_hook_table.py`` fails when
``docs/plugin-guide.md`` holds another table."""

from __future__ import annotations

import inspect

from xce.core.pickers.base import CAPABILITIES, JobPicker
from xce.core.pickers.hooks import methods, parameters


def _call(protocol: type, method: str) -> str:
    return f"`{method}({', '.join(parameters(protocol, method))})`"


def _text(doc: str | None) -> str:
    return " ".join(inspect.cleandoc(doc or "").split())


def hook_table() -> str:
    """The markdown table: one row per required hook (MUST), then one per optional capability (MAY)."""
    rows = ["| hook | when | must / may |", "| --- | --- | --- |"]
    for method in methods(JobPicker):
        rows.append(f"| {_call(JobPicker, method)} | {_text(vars(JobPicker)[method].__doc__)} | MUST |")
    for capability in CAPABILITIES:
        calls = " / ".join(_call(capability, m) for m in methods(capability))
        rows.append(f"| {calls} | {_text(capability.__doc__)} | MAY ({capability.__name__}) |")
    return "\n".join(rows) + "\n"
