"""The cyclic collector waits while a round runs (xce.core.gcpause) and is always given back: after
a round, after a round that raised, and never switched on when it was off before."""

import gc

import pytest

from xce.core.gcpause import collector_paused
from xce.testing import Harness, make_host, make_job


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_round_runs_with_the_collector_paused_and_gives_it_back(collector_on, monkeypatch):
    h = Harness()
    h.hosts(make_host("a").slots(2))
    h.submit(make_job(1), make_job(2))
    seen = []
    picker = h.core.picker
    next_job = picker.next_job

    def watching():
        seen.append(gc.isenabled())
        return next_job()

    monkeypatch.setattr(picker, "next_job", watching)
    decisions = h.round()
    assert [d[0] for d in decisions] == ["DISPATCH", "DISPATCH"]
    assert seen and not any(seen)
    assert gc.isenabled()


def test_the_collector_comes_back_when_the_round_raises(collector_on):
    with pytest.raises(RuntimeError):
        with collector_paused():
            assert not gc.isenabled()
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector_on):
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
