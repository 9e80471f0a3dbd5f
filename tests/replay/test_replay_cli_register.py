"""``xce scheduler``: with --sim it replays; without, it hands over to the normal-mode driver."""

from __future__ import annotations

import sys
import types

from xce.cli.main import XCE
from xce.replay.writer import record
from xce.testing.cli import invoke
from xce.testing.scenarios import random_events


def test_registered_command_replays(tmp_path):
    path = tmp_path / "r.jsonl"
    record(random_events(1, njobs=20), path)
    result = invoke(XCE, ["scheduler", "--sim", str(path), "--sim-verify"])
    assert result.exit_code == 0, result.output
    assert "0 mismatches" in result.output


def test_normal_mode_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "xce.scheduler.normal_driver", None)  # import fails
    monkeypatch.delattr("xce.scheduler.normal_driver", raising=False)  # even after another test imported it
    result = invoke(XCE, ["scheduler"])
    assert result.exit_code == 2
    assert "normal mode is not available in this build" in result.output


def test_normal_mode_gets_the_options(monkeypatch):
    seen = {}
    fake = types.ModuleType("xce.scheduler.normal_driver")
    fake.main = lambda **kw: seen.update(kw)
    monkeypatch.setitem(sys.modules, "xce.scheduler.normal_driver", fake)
    monkeypatch.setattr("xce.scheduler.normal_driver", fake, raising=False)
    result = invoke(XCE, ["scheduler", "--url", "http://127.0.0.1:9", "--seed", "4",
                          "--record-snapshot-interval", "50"])
    assert result.exit_code == 0, result.output
    assert seen["url"] == "http://127.0.0.1:9" and seen["seed"] == 4 and seen["record_snapshot_interval"] == 50


def test_sim_options_without_sim_are_a_usage_error():
    result = invoke(XCE, ["scheduler", "--sim-verify"])
    assert result.exit_code == 2
    assert result.stderr == "xce scheduler: --sim-verify need(s) --sim FILE (see 'xce scheduler --help')\n"


def test_a_bad_timestamp_is_a_usage_error(tmp_path):
    result = invoke(XCE, ["scheduler", "--sim", str(tmp_path / "r.jsonl"), "--sim-start-ts", "yesterday"])
    assert result.exit_code == 2
    assert result.stderr.startswith("xce scheduler: --sim-start-ts: timestamp 'yesterday' is neither")
