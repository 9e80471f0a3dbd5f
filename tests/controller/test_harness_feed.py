"""The scheduler process reads the controller's feed as the core's own events, strictly: what
tests/controller/test_controller_protocol.py::test_full_state_sync_is_consistent_with_the_feed checks of
the feed over HTTP, here between the in-process controller and the scheduler's decoding."""

from __future__ import annotations

import json

import pytest

from xce.controller.sched import feed
from xce.core import events as ev
from xce.scheduler.normal_driver import NormalDriver
from xce.testing.controller_harness import ControllerHarness


@pytest.fixture
def h(tmp_path):
    with ControllerHarness(tmp_path) as harness:
        harness.host("h1", slots=4)
        yield harness


def scheduler() -> NormalDriver:
    return NormalDriver("http://127.0.0.1:9", "unused")  # never connects: pages are handed to it


def test_the_scheduler_decodes_the_feed_into_the_events_the_controller_published(h):
    jobid = h.submit(array=3)
    h.dispatch(jobid, ("h1", 1))
    h.report("h1", jobid, "started", pid=1, usage={"memory_rss": 1 << 20})
    h.modify(jobid + 1, priority=7)
    body, _ = feed.read_events(h.ctl, 0, 10_000)
    driver = scheduler()
    driver._take(json.loads(body))
    assert driver.pending == h.feed
    assert [type(e) for e in driver.pending[-4:]] == [ev.JobsPush, ev.JobStateChange, ev.JobRusage, ev.JobUpdate]


def test_a_config_push_carries_the_scheduler_process_settings_beside_the_core_configuration(h):
    (config,) = [e for e in h.feed if isinstance(e, ev.ConfigPush)]
    assert [q.name for q in config.config.queues] == ["closed", "high", "normal"]
    (raw,) = [e["event"] for e in json.loads(feed.read_events(h.ctl, 0, 10)[0])["events"]
              if e["event"]["type"] == "CONFIG_PUSH"]
    assert raw["payload"]["driver"]["round_interval_s"] == h.ctl.config.scheduler.round_interval_s


def test_an_event_the_scheduler_does_not_know_fails_with_one_line_naming_it(h):
    page = {"events": [{"seq": 1, "event": {"type": "JOB_TELEPORT", "ts": 1, "payload": {"jobid": 1}}}],
            "last_seq": 1}
    driver = scheduler()
    with pytest.raises(ev.EventFormatError) as err:
        driver._take(page)
    assert str(err.value).startswith("unknown event type 'JOB_TELEPORT' (expected one of CONFIG_PUSH, JOBS_PUSH")
    assert "\n" not in str(err.value) and driver.pending == []
