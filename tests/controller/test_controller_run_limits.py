"""Run limits at submission: the queue's default, its maximum, and what the scheduler and worker are told."""

from __future__ import annotations

import json

import pytest

from xce.controller.errors import FieldErrors
from xce.controller.jobs import submission
from xce.controller.sched import feed
from xce.controller.sched.decisions import start_payload
from xce.controller.service import Controller, Settings
from xce.controller.web.models import SubmitRequest
from xce.core.specs import JobSpec

CONFIG = """
default_queue = "short"
[queues.short]
run_limit = 10
max_run_limit = 60
[queues.open]
"""


@pytest.fixture
def ctl(tmp_path):
    cfg = tmp_path / "xce.toml"
    cfg.write_text(CONFIG)
    c = Controller(Settings(state_dir=tmp_path / "state", config_path=cfg))
    c.open()
    yield c
    c.close()


def submit(ctl, **kw):
    return submission.submit(ctl, "ann", SubmitRequest(command=["sleep", "1"], **kw))


def pushed_spec(ctl, jobid):
    body, _ = feed.read_events(ctl, 0, 10_000)
    for e in json.loads(body)["events"]:
        if e["event"]["type"] == "JOBS_PUSH":
            for j in e["event"]["payload"]["jobs"]:
                if j["jobid"] == jobid:
                    return JobSpec.from_json(j)
    raise AssertionError(f"no JOBS_PUSH for job {jobid}")


def test_a_job_gets_what_it_asked_for_else_the_queue_default_else_none(ctl):
    asked = submit(ctl, run_limit=90)["jobid"]
    default = submit(ctl)["jobid"]
    unlimited = submit(ctl, queue="open")["jobid"]
    assert [ctl.job(j)["run_limit"] for j in (asked, default, unlimited)] == [90, 600, None]
    assert [pushed_spec(ctl, j).run_limit for j in (asked, default, unlimited)] == [90, 600, 0]
    assert start_payload(ctl.job(asked), [["h1", 1]])["job"]["run_limit"] == 90


def test_a_limit_longer_than_the_queue_maximum_is_refused_and_nothing_is_written(ctl):
    before = ctl.next_job
    with pytest.raises(FieldErrors) as err:
        submit(ctl, run_limit=3601)
    (e,) = err.value.errors
    assert e["loc"] == ["body", "run_limit"]
    assert e["msg"] == "run limit 1:00:01 is longer than queue 'short' allows (max_run_limit = 60 min)"
    assert ctl.next_job == before
    assert ctl.job(submit(ctl, run_limit=3600)["jobid"])["run_limit"] == 3600


def test_a_job_with_gpus_per_host_tells_each_worker_how_many_are_its_own(ctl):
    job = submit(ctl, tasks=4, request="rusage[xce.io/gpu=2/host] span[hosts=1]", allow_pending_forever=True)["jobid"]
    payload = start_payload(ctl.job(job), [["h1", 4]])["job"]
    assert payload["host_requests"] == {"xce.io/gpu": 2} and not payload["requests"]
