"""The plugin guide's hook table is the one the contract's declarations render: a hook the core
calls cannot be missing from the guide, nor a documented one be gone from the core."""

import pathlib

from xce.core.pickers.hooktable import hook_table

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "plugin-guide.md"
HEADER = "| hook | when | must / may |"


def guide_table() -> str:
    lines = GUIDE.read_text().splitlines()
    start = lines.index(HEADER)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def test_the_guide_shows_the_table_the_declarations_render():
    assert guide_table() == hook_table(), (
        "docs/plugin-guide.md's hook table differs from xce.core.pickers.hooktable.hook_table(): paste its output")


def test_every_hook_the_core_calls_is_in_the_table():
    table = hook_table()
    for call in ("`pend_note(job)`", "`constraint(job)`", "`held_back()`", "`on_config(config)`",
                 "`on_job_rusage(job, usage)`", "`save_state()` / `load_state(state)`", "`next_job()`"):
        assert call in table
