"""A session can be cancelled between next_job() calls and between candidate hosts, and a
cancelled session leaves no half-applied allocation."""

from xce.testing import Harness, make_host, make_job


def test_cancel_between_jobs_stops_the_session_after_that_decision():
    h = Harness()
    h.hosts(make_host("h1").slots(8))
    h.submit(make_job(1), make_job(2), make_job(3))
    seen = []

    def sink(d):
        seen.append(d)
        if len(seen) == 2:
            h.core.cancel()

    h.core._on_decision = sink
    h.push_round = h.round_decisions()
    assert [d.jobid for d in seen] == [1, 2]
    assert h.core.jobs[3].state == "PEND"
    h.core._on_decision = h.recorder
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]


def test_cancel_between_candidate_hosts_leaves_nothing_charged():
    h = Harness()
    h.hosts(*(make_host(f"h{i}").slots(1) for i in range(6)))
    h.submit(make_job(1).tasks(4))
    from xce.core.alloc import hosts as host_mod

    original = host_mod.host_iter
    calls = {"n": 0}

    def cancel_after_two(*args, **kw):
        for item in original(*args, **kw):
            calls["n"] += 1
            if calls["n"] == 2:
                h.core.cancel()
            yield item

    import xce.core.alloc.allocator as alloc_mod

    alloc_mod.host_iter = cancel_after_two
    try:
        assert h.round() == []
    finally:
        alloc_mod.host_iter = original
    assert h.core.cluster.inuse_table() == {}
    assert h.core.jobs[1].state == "PEND" and h.core.jobs[1].placement == ()
    assert h.round() == [("DISPATCH", 1, tuple((f"h{i}", 1) for i in range(4)))]
