"""``register(app)`` adds ``scheduler``; without --sim it hands over to the normal-mode driver."""

from __future__ import annotations

import sys
import types

import typer
from typer.testing import CliRunner

from xce.cli import scheduler_cmd
from xce.replay.writer import record
from xce.testing.scenarios import random_events


def _app():
    app = typer.Typer()
    scheduler_cmd.register(app)

    @app.command()
    def other() -> None:  # a second command so that "scheduler" must be named
        pass

    return app


def test_registered_command_replays(tmp_path):
    path = tmp_path / "r.jsonl"
    record(random_events(1, njobs=20), path)
    result = CliRunner().invoke(_app(), ["scheduler", "--sim", str(path), "--sim-verify"])
    assert result.exit_code == 0, result.output
    assert "0 mismatches" in result.output


def test_normal_mode_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "xce.scheduler.normal_driver", None)  # import fails
    result = CliRunner().invoke(_app(), ["scheduler"])
    assert result.exit_code == 2
    assert "normal mode is not available in this build" in result.output


def test_normal_mode_gets_the_options(monkeypatch):
    seen = {}
    fake = types.ModuleType("xce.scheduler.normal_driver")
    fake.main = lambda **kw: seen.update(kw)
    monkeypatch.setitem(sys.modules, "xce.scheduler.normal_driver", fake)
    monkeypatch.setattr("xce.scheduler.normal_driver", fake, raising=False)
    result = CliRunner().invoke(_app(), ["scheduler", "--url", "http://127.0.0.1:9", "--seed", "4",
                                         "--record-snapshot-interval", "50"])
    assert result.exit_code == 0, result.output
    assert seen["url"] == "http://127.0.0.1:9" and seen["seed"] == 4 and seen["record_snapshot_interval"] == 50


def test_sim_options_without_sim_are_a_usage_error():
    result = CliRunner().invoke(_app(), ["scheduler", "--sim-verify"])
    assert result.exit_code == 2
    assert "--sim-verify need(s) --sim FILE" in result.output
