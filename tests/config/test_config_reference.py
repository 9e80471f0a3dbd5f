"""The checked-in configuration reference is generated from the schema and must not go stale."""

from __future__ import annotations

from pathlib import Path

from xce.config import reference
from xce.config.reference import REGENERATE, render, sections

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "configuration.md"


def test_checked_in_reference_is_current():
    assert REFERENCE.exists(), f"docs/reference/configuration.md is missing; generate it with: {REGENERATE}"
    current = REFERENCE.read_text(encoding="utf-8")
    assert current == render(), f"docs/reference/configuration.md is stale; regenerate it with: {REGENERATE}"


def test_render_is_deterministic():
    assert render() == render()


def test_every_key_of_every_section_is_documented_with_a_description():
    text = render()
    for section in sections():
        if section.path:
            assert f"## `{section.header}`" in text
        for name, field in section.model.model_fields.items():
            assert field.description, f"{section.header}: key {name!r} has no description in the schema"
            assert f"| `{name}` |" in text


def test_reference_shows_types_defaults_and_constraints():
    text = render()
    assert "| `max_running` | integer | unset | ≥ 1 |" in text
    assert '| `preempt_signal` | string | `"SIGSTOP"` | one of `"SIGSTOP"`, `"SIGTSTP"` |' in text
    assert "| `total` | integer | **required** | ≥ 0 |" in text
    assert "## `[shared_resources.\"<domain>/<name>\"]`" in text
    assert '| `queues` | table of tables, one per name | `{ normal = {} }` |' in text


def test_main_writes_the_page(capsys):
    reference.main()
    assert capsys.readouterr().out == render()
