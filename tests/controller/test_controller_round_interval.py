"""``[scheduler] round_interval_s`` and ``max_round_interval_s`` set the normal driver's cadence
(issue 24): read at sync, followed on ``xceadmin reconfig``, and overridden by the command line."""

from __future__ import annotations

import threading
import time

import pytest
from controller_harness import write_config

from xce.client.launch import start_controller
from xce.scheduler.normal_driver import NormalDriver

pytestmark = pytest.mark.integration

CONFIG = """
default_queue = "normal"
[scheduler]
round_interval_s = 1.5
max_round_interval_s = 7
[queues.normal]
"""


@pytest.fixture
def ctl(tmp_path):
    c = start_controller(tmp_path / "state", config=str(write_config(tmp_path, CONFIG)))
    yield c
    c.stop()


def test_the_driver_takes_its_cadence_from_the_configuration_and_follows_a_reload(ctl, tmp_path):
    driver = NormalDriver(ctl.url, ctl.token("scheduler"))
    try:
        driver.sync()
        assert (driver.round_interval, driver.max_round_interval) == (1.5, 7.0)
        write_config(tmp_path, CONFIG.replace("1.5", "0.4"))
        import httpx

        r = httpx.post(f"{ctl.url}/v1/admin/reconfig", headers={"Authorization": f"Bearer {ctl.token('admin')}"})
        assert r.status_code == 200, r.text
        driver.poll(0)
        assert (driver.round_interval, driver.max_round_interval) == (0.4, 7.0)
    finally:
        driver.http.close()


def test_the_command_line_wins_over_the_configuration(ctl):
    driver = NormalDriver(ctl.url, ctl.token("scheduler"), round_interval=0.05)
    try:
        driver.sync()
        assert (driver.round_interval, driver.max_round_interval) == (0.05, 7.0)
    finally:
        driver.http.close()


def test_rounds_are_no_more_frequent_than_round_interval_s_while_submissions_keep_arriving(ctl):
    import httpx

    driver = NormalDriver(ctl.url, ctl.token("scheduler"))
    user = httpx.Client(base_url=ctl.url, timeout=30, headers={"Authorization": f"Bearer {ctl.user_token()}"})
    runner = threading.Thread(target=driver.run, daemon=True)
    try:
        runner.start()
        deadline = time.monotonic() + 30
        while driver.core is None and time.monotonic() < deadline:
            time.sleep(0.05)
        start_rounds, start = driver.rounds, time.monotonic()
        while time.monotonic() - start < 4.0:
            r = user.post("/v1/jobs", json={"command": ["true"]})
            assert r.status_code == 201, r.text
            time.sleep(0.1)
        elapsed = time.monotonic() - start
        rounds = driver.rounds - start_rounds
        # 40 submissions in 4 s: a round at most every 1.5 s (one more for the one already due).
        assert 1 <= rounds <= elapsed / 1.5 + 1, (rounds, elapsed)
    finally:
        driver.stopping = True
        runner.join(timeout=30)
        user.close()
        driver.http.close()
