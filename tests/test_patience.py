"""Waits that stretch with the machine's load, and what a wait that gives up says."""

from __future__ import annotations

import subprocess
import sys
import time

from xce.client.launch import log_tail, process_state
from xce.client.patience import MAX_STRETCH, Patience


def _run_out(p: Patience) -> float:
    while not p.expired():
        time.sleep(0.01)
    return p.waited()


def test_a_budget_is_never_shorter_than_its_wall_time_and_never_longer_than_its_stretch():
    waited = _run_out(Patience(0.3))
    assert 0.3 <= waited <= 0.3 * MAX_STRETCH + 0.5


def test_a_loaded_machine_stretches_the_wait_up_to_its_cap():
    assert 0.8 <= _run_out(Patience(0.2, load=lambda: 4.0)) <= 1.5  # a fourth of each second counts
    assert _run_out(Patience(0.1, load=lambda: 100.0)) <= 0.1 * MAX_STRETCH + 0.5  # stuck: given up on
    assert _run_out(Patience(0.2, load=lambda: 0.3)) < 0.5  # an idle machine is not slower than one


def test_xce_patience_multiplies_every_budget(monkeypatch):
    monkeypatch.setenv("XCE_PATIENCE", "3")
    p = Patience(0.2)
    assert abs(p.budget - 0.6) < 1e-9
    assert _run_out(p) >= 0.6
    monkeypatch.setenv("XCE_PATIENCE", "nonsense")
    assert Patience(0.2).budget == 0.2


def test_a_wait_that_gives_up_says_what_the_process_was_doing(tmp_path):
    empty = tmp_path / "controller.log"
    empty.write_text("")
    assert "is empty" in log_tail(empty)
    empty.write_text("".join(f"line {i}\n" for i in range(100)))
    tail = log_tail(empty, lines=3)
    assert tail == "line 97\nline 98\nline 99"
    assert "no log at" in log_tail(tmp_path / "missing.log")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert process_state(sleeper.pid).startswith("running (state ")
        assert "s of CPU" in process_state(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert process_state(sleeper.pid) == "gone"
