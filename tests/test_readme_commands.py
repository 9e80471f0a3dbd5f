"""The README promises a new user two commands; CI and the Makefile must keep that promise.

A fresh-clone run of ``make test`` is CI's job (.ci/run); these tests only read the files, so a
drift between README, CI script and Makefile is caught in seconds on any machine.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, "README.md has no '## Quick start' section"
    return m.group(1)


def commands(block: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def make_rules() -> dict[str, tuple[list[str], list[str]]]:
    """target -> (prerequisites, recipe lines), from the Makefile's plain ``target: prereqs`` rules."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith("\t") and current:
            rules[current][1].append(line.strip())
            continue
        m = re.match(r"^([^\s:=#][^:=]*?)\s*:(?!=)\s*(.*)$", line)
        current = None
        if m:
            current = m.group(1).strip()
            rules[current] = (m.group(2).split(), [])
    return rules


def test_quick_start_has_exactly_make_demo_and_make_test():
    blocks = re.findall(r"```[a-z]*\n(.*?)```", quick_start(), re.S)
    assert len(blocks) == 1, f"the quick start should have one code block, found {len(blocks)}"
    assert commands(blocks[0]) == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command():
    assert "make test" in commands((ROOT / ".ci" / "run").read_text())


def test_make_demo_and_make_test_set_up_the_venv_from_pyproject():
    rules = make_rules()
    variables = dict(re.findall(r"^(\w+)\s*[:?]?=\s*(.*)$", (ROOT / "Makefile").read_text(), re.M))
    setup = rules["$(STAMP)"]
    assert "pyproject.toml" in setup[0], "the venv must be rebuilt when pyproject.toml changes"
    assert any("-m venv $(VENV)" in line for line in setup[1])
    assert any(re.search(r"\$\(VENV\)/bin/pip install .*-e '?\.\[test\]'?", line) for line in setup[1])
    assert variables["STAMP"].startswith("$(VENV)/"), "the stamp lives in the venv, so `make clean` resets both"
    for target, runs in (("demo", "$(VENV)/bin/xce demo"), ("test", "$(VENV)/bin/python -m pytest")):
        prereqs, recipe = rules[target]
        assert "$(STAMP)" in prereqs, f"`make {target}` must set up the venv first"
        assert any(line.startswith(runs) for line in recipe), (target, recipe)
