"""A recording picker sees its hooks in the order the spec defines (Req 1 AC 2-4)."""

import pytest

from xce.core import events as ev
from xce.core.pickers import register
from xce.core.pickers.fcfs import FcfsPicker
from xce.core.pickers.registry import PluginError, unregister
from xce.testing import Harness, make_host, make_job, queue


class RecordingPicker(FcfsPicker):
    name = "test_recording"
    calls: list = []

    def _rec(self, *what):
        RecordingPicker.calls.append(what)

    def init(self, core):
        self._rec("init")
        super().init(core)

    def on_config(self, config):
        self._rec("on_config")

    def on_queue_update(self, q):
        self._rec("on_queue_update", q.name)
        super().on_queue_update(q)

    def on_job_push(self, job):
        self._rec("on_job_push", job.jobid)
        super().on_job_push(job)

    def on_job_state_change(self, job, new_state):
        self._rec("on_job_state_change", job.jobid, new_state)
        super().on_job_state_change(job, new_state)

    def on_job_update(self, job):
        self._rec("on_job_update", job.jobid)
        super().on_job_update(job)

    def on_job_rusage(self, job, usage):
        self._rec("on_job_rusage", job.jobid)

    def begin_session(self):
        self._rec("begin_session")
        super().begin_session()

    def next_job(self):
        job = super().next_job()
        self._rec("next_job", job.jobid if job else None)
        return job

    def end_session(self):
        self._rec("end_session")
        super().end_session()

    def on_dispatch(self, jobid):
        self._rec("on_dispatch", jobid)
        super().on_dispatch(jobid)

    def on_pend(self, jobid):
        self._rec("on_pend", jobid)
        super().on_pend(jobid)


@pytest.fixture
def recording():
    RecordingPicker.calls = []
    register(RecordingPicker.name, RecordingPicker)
    yield RecordingPicker.calls
    unregister(RecordingPicker.name)


def test_hooks_arrive_in_spec_order(recording):
    h = Harness(queues=[queue("normal")], picker="test_recording")
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2))
    decisions_seen_before_end = []
    h.core._on_decision = lambda d: (h.recorder(d), decisions_seen_before_end.append(len(recording)))
    h.round()
    h.update(2, priority=3)
    h.usage(1, memory_rss=10)
    h.state(1, "DONE")
    assert recording == [
        ("init",),
        ("on_queue_update", "normal"),
        ("on_config",),
        ("on_job_push", 1),
        ("on_job_push", 2),
        ("begin_session",),
        ("next_job", 1),
        ("on_dispatch", 1),
        ("next_job", 2),
        ("on_pend", 2),
        ("next_job", None),
        ("end_session",),
        ("on_job_update", 2),
        ("on_job_rusage", 1),
        ("on_job_state_change", 1, "DONE"),
    ]
    # Every decision was delivered during the session, before end_session.
    assert decisions_seen_before_end and max(decisions_seen_before_end) < recording.index(("end_session",))


def test_unknown_picker_names_itself_and_the_registered_ones():
    with pytest.raises(PluginError) as err:
        Harness(picker="no_such_picker")
    assert "'no_such_picker' is not registered" in str(err.value)
    assert "builtin_fcfs" in str(err.value)


def test_unknown_queue_override_is_refused_and_nothing_changes():
    h = Harness(queues=[queue("normal")])
    before = dict(h.core.queues)
    with pytest.raises(PluginError, match="nope"):
        h.push(ev.QueueUpdate(ts=99, queue=queue("normal", job_pick_plugin="nope")))
    assert h.core.queues == before
    assert h.core.queues["normal"].spec.job_pick_plugin is None


def test_duplicate_registration_is_refused():
    register("test_dup", FcfsPicker)
    try:
        with pytest.raises(PluginError, match="already registered"):
            register("test_dup", RecordingPicker)
    finally:
        unregister("test_dup")
