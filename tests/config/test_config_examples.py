"""The shipped examples are what operators copy; each must validate and say what it claims to."""

from __future__ import annotations

from pathlib import Path

import pytest

from xce.config import load_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_three_documented_examples_ship():
    names = {p.name for p in EXAMPLES.glob("*.toml")}
    assert {"laptop.toml", "preemption.toml", "licenses.toml"} <= names


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_validates(path):
    load_config(path)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_explains_itself(path):
    comments = [line for line in path.read_text().splitlines() if line.lstrip().startswith("#")]
    assert len(comments) >= 5, f"{path.name} should tell an operator what it is for"
    assert f"xce config check examples/{path.name}" in path.read_text()


def test_laptop_has_one_small_queue():
    cfg = load_config(EXAMPLES / "laptop.toml")
    assert list(cfg.queues) == ["normal"]
    assert cfg.default_queue == "normal"


def test_preemption_example():
    cfg = load_config(EXAMPLES / "preemption.toml")
    assert sorted(cfg.queues) == ["high", "low", "normal"]
    assert cfg.queues["high"].priority == 50
    assert cfg.queues["high"].preemptible_queues == ["low"]
    assert cfg.queues["low"].priority == 10


def test_licenses_example():
    cfg = load_config(EXAMPLES / "licenses.toml")
    assert cfg.shared_resources["example.com/cfd-license"].total == 4
    assert cfg.queues
