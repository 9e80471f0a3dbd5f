"""What a picker plugin author sees of the contract: a picker gets a narrow view of the core, one
that breaks the contract is refused when it is made, with one line, and the optional hooks it has
are the ones the core calls."""

from __future__ import annotations

import ast
import pathlib
import random

import pytest

from xce.core.pickers import BasePicker, register
from xce.core.pickers.fcfs import FcfsPicker
from xce.core.pickers.registry import PluginError, unregister
from xce.core.pickers.view import PickerView
from xce.testing import Harness, make_host, make_job

PICKERS = pathlib.Path(__file__).resolve().parents[2] / "xce" / "core" / "pickers"


@pytest.fixture
def plugin():
    names = []

    def add(cls):
        register(cls.name, cls)
        names.append(cls.name)
        return cls.name

    yield add
    for name in names:
        unregister(name)


def refusal(name: str) -> str:
    with pytest.raises(PluginError) as err:
        Harness(picker=name)
    text = str(err.value)
    assert "\n" not in text
    return text


def test_a_hook_of_the_wrong_shape_is_refused_when_the_picker_is_made(plugin):
    class TwoArgs(FcfsPicker):
        name = "test_two_args"

        def constraint(self, job, hosts):
            return None

    assert refusal(plugin(TwoArgs)) == \
        "picker plugin 'test_two_args': constraint(job, hosts) cannot be called as constraint(job)"


def test_a_hook_that_is_not_a_method_is_refused(plugin):
    class NotCallable(FcfsPicker):
        name = "test_not_callable"
        pend_note = "reservation"

    assert refusal(plugin(NotCallable)) == \
        "picker plugin 'test_not_callable': pend_note must be a method pend_note(job)"


def test_a_missing_required_hook_is_refused(plugin):
    class NoCursor(BasePicker):
        name = "test_no_cursor"

        def on_queue_update(self, queue): ...
        def on_job_push(self, job): ...
        def on_job_state_change(self, job, new_state): ...
        def on_job_update(self, job): ...
        def begin_session(self): ...
        def end_session(self): ...
        def on_dispatch(self, jobid): ...
        def on_pend(self, jobid): ...

    assert refusal(plugin(NoCursor)) == "picker plugin 'test_no_cursor': required hook next_job() is missing"


def test_state_saved_but_never_loaded_is_refused(plugin):
    class SaveOnly:
        name = "test_save_only"
        init = fini = begin_session = end_session = next_job = lambda self, *a: None
        on_queue_update = on_job_push = on_job_update = on_dispatch = on_pend = lambda self, x: None
        on_job_state_change = lambda self, job, new_state: None  # noqa: E731

        def save_state(self):
            return {}

    assert "save_state without load_state" in refusal(plugin(SaveOnly))


def test_a_delegate_of_the_wrong_shape_is_refused_when_its_queue_names_it(plugin):
    from xce.testing import queue

    class Bad(FcfsPicker):
        name = "test_bad_delegate"

        def pend_note(self):
            return None

    plugin(Bad)
    with pytest.raises(PluginError, match="pend_note"):
        Harness(queues=[queue("normal", job_pick_plugin="test_bad_delegate")])


def test_a_pend_note_shows_with_the_jobs_reasons(plugin):
    from xce.core.reasons import make_pend_reason

    class Noting(FcfsPicker):
        name = "test_noting"

        def pend_note(self, job):
            return make_pend_reason("reservation", detail=f"noted {job.jobid}")

    h = Harness(picker=plugin(Noting))
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2))
    pends = [d for d in h.round_decisions() if d.OP == "PEND"]
    assert [(d.jobid, [r.step for r in d.reasons]) for d in pends] == [(2, ["slots", "reservation"])]
    assert pends[0].reasons[-1].text.endswith("noted 2")


def test_a_picker_written_for_the_core_keeps_self_core_and_its_rng(plugin):
    seen = []

    class Old(FcfsPicker):
        name = "test_old_contract"

        def init(self, core):
            super().init(core)
            seen.append(self.core.rng.random())

        def begin_session(self):
            super().begin_session()
            seen.append(len(self.core.queues))

    h = Harness(picker=plugin(Old), seed=3)
    h.round()
    assert isinstance(h.core.picker.core, PickerView)
    assert seen[0] == random.Random(3).random() and seen[1:] == [1]


def test_what_the_view_does_not_offer_fails_with_a_line_that_says_why(plugin):
    class Reaching(FcfsPicker):
        name = "test_reaching"

        def begin_session(self):
            super().begin_session()
            self.view.ledger  # noqa: B018 - reading it is the test: the view has no such attribute

    h = Harness(picker=plugin(Reaching))
    with pytest.raises(AttributeError, match="'PickerView' object has no attribute 'ledger'"):
        h.round()


def test_the_view_cannot_be_changed_by_a_picker():
    h = Harness()
    view = h.core.picker.view
    with pytest.raises(AttributeError, match="read-only"):
        view.session = None
    assert view.queues is h.core.queues and view.jobs is h.core.jobs  # the core's own, never copied


def test_no_picker_imports_the_registry():
    """The registry imports the pickers; a picker that imported it back would close a cycle."""
    offenders = []
    for path in sorted(PICKERS.glob("*.py")):
        if path.name in ("__init__.py", "registry.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n in ("xce.core.pickers.registry", "xce.core.pickers") or n.startswith("xce.core.pickers.registry")
                   for n in names):
                offenders.append(path.name)
    assert offenders == []
