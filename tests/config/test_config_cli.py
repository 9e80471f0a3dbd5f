"""``xce config check``: an operator's pre-flight for an edited xce.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from xce.cli.main import XCE
from xce.testing.cli import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def app():
    return XCE


def run(app, *args):
    return invoke(app, ["config", "check", *map(str, args)])


def test_ok_summary(app):
    result = run(app, EXAMPLES / "licenses.toml")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{EXAMPLES / 'licenses.toml'}: OK (2 queues, 2 projects, 1 shared resource)\n"


def test_ok_summary_counts_singular(app):
    result = run(app, EXAMPLES / "laptop.toml")
    assert result.stdout.endswith(": OK (1 queue, 1 project, 0 shared resources)\n")


def test_errors_exit_1_and_list_every_problem(app, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[queues.normal]\nprioriy = 5\npreempt_signal = "SIGKILL"\n')
    result = run(app, bad)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{bad}:2: queues.normal.prioriy: unknown key 'prioriy'; did you mean 'priority'?",
        f"{bad}:3: queues.normal.preempt_signal: expected one of 'SIGSTOP', 'SIGTSTP', got string \"SIGKILL\"",
        f"{bad}: 2 errors",
    ]
    assert result.stdout == ""


def test_several_files_one_bad(app, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("priority 5\n")
    result = run(app, EXAMPLES / "preemption.toml", bad)
    assert result.exit_code == 1
    assert "preemption.toml: OK (3 queues, 1 project, 0 shared resources)" in result.stdout
    assert "TOML syntax error at line 1, column 10" in result.stderr


def test_no_plugins_skips_the_registry_check(app, tmp_path):
    cfg = tmp_path / "site.toml"
    cfg.write_text('[scheduler]\njob_pick_plugin = "site_fairshare"\n')
    assert run(app, "--no-plugins", cfg).exit_code == 0


def test_help_has_an_example(app):
    result = invoke(app, ["config", "check", "--help"])
    assert result.exit_code == 0
    assert "$ xce config check /etc/xce/xce.toml" in result.stdout
    assert "--no-plugins" in result.stdout
