"""UNKWN (its host stopped reporting): the job keeps its slots and resources through the host's
absence and its return, so nothing is ever placed on top of a job that may still run."""

from xce.testing import Harness, make_host, make_job, queue


def dispatched(decisions):
    return [d[1] for d in decisions if d[0] == "DISPATCH"]


def test_unknown_job_holds_its_slots_until_it_really_ends():
    h = Harness(queues=[queue("normal", 10)])
    h.hosts(make_host("h1").slots(2))
    h.submit(make_job(1).tasks(2))
    assert dispatched(h.round()) == [1]
    h.state(1, "UNKWN", "unknown: worker h1 stopped reporting")
    h.submit(make_job(2))
    assert dispatched(h.round()) == []  # its slots are still job 1's
    assert h.inuse("h1", "slots") == 2
    h.state(1, "RUN", "running: worker h1 reported it still runs")
    assert dispatched(h.round()) == []
    h.state(1, "DONE")
    assert dispatched(h.round()) == [2]


def test_unknown_job_that_is_declared_lost_or_requeued_frees_its_slots():
    h = Harness(queues=[queue("normal", 10)])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1), make_job(2))
    assert dispatched(h.round()) == [1]
    h.state(1, "UNKWN")
    assert dispatched(h.round()) == []
    h.state(1, "PEND", "requeued: host h1 declared down by root (the job is rerunnable)")
    assert dispatched(h.round()) == [1]  # first come, first served again
