"""Reservation vs. actual usage for real resources (resource-accounting.md), one test per case."""

from xce.testing import Harness, make_host, make_job

G = 1024**3


def one_host(mem="16G", slots=8):
    h = Harness()
    h.hosts(make_host("h1").slots(slots).mem(mem))
    return h


def test_over_estimate_keeps_the_reservation_charged():
    h = one_host()
    h.submit(make_job(1).rusage("mem=4G"))
    h.round()
    h.usage(1, memory_rss=1 * G)
    assert h.inuse("h1", "mem") == 4 * G
    acc = h.core.jobs[1].accounts[("h1", "mem")]
    assert (acc.reserved, acc.allocated, acc.used) == (4 * G, 4 * G, 0)


def test_under_estimate_charges_the_actual():
    h = one_host()
    h.submit(make_job(1).rusage("mem=1G"))
    h.round()
    h.usage(1, memory_rss=3 * G)
    assert h.inuse("h1", "mem") == 3 * G
    assert h.core.jobs[1].accounts[("h1", "mem")].used == 2 * G


def test_an_unreserved_job_is_charged_its_full_actual_usage():
    h = one_host()
    h.submit(make_job(1))
    h.round()
    assert ("h1", "mem") not in h.core.jobs[1].accounts
    h.usage(1, memory_rss=2 * G)
    acc = h.core.jobs[1].accounts[("h1", "mem")]
    assert (acc.reserved, acc.used) == (0, 2 * G)
    assert h.inuse("h1", "mem") == 2 * G


def test_a_usage_tick_changes_only_that_resource_and_only_by_the_delta():
    h = one_host()
    h.submit(make_job(1).tasks(2).rusage("mem=1G"))
    h.round()
    assert h.inuse("h1", "slots") == 2
    h.usage(1, memory_rss=5 * G)
    h.usage(1, memory_rss=4 * G)
    assert h.inuse("h1", "mem") == 4 * G
    assert h.inuse("h1", "slots") == 2


def test_rederiving_in_use_each_round_gives_identical_figures():
    h = one_host()
    h.submit(make_job(1).rusage("mem=1G"), make_job(2), make_job(3).rusage("mem=2G"))
    h.round()
    h.usage(1, memory_rss=3 * G)
    h.usage(2, memory_rss=G // 2)
    before = h.core.cluster.inuse_table()
    h.round()  # a round re-derives touched hosts
    h.core.cluster.rederive()  # and a full re-derivation agrees
    assert h.core.cluster.inuse_table() == before == {"h1": {"mem": 3 * G + G // 2 + 2 * G, "slots": 3}}


def test_a_multi_host_job_stays_at_its_flat_reservation():
    h = Harness()
    h.hosts(make_host("a").slots(1).mem("8G"), make_host("b").slots(1).mem("8G"))
    h.submit(make_job(1).tasks(2).rusage("mem=1G"))
    assert h.round() == [("DISPATCH", 1, (("a", 1), ("b", 1)))]
    h.usage(1, memory_rss=6 * G)
    assert h.inuse("a", "mem") == h.inuse("b", "mem") == 1 * G


def test_an_unregistered_resource_is_ignored_without_error():
    h = one_host()
    h.submit(make_job(1))
    h.round()
    h.usage(1, **{"example.com/unheard-of": 7, "cpu_time": 12})
    assert h.core.cluster.inuse_table() == {"h1": {"slots": 1}}
    assert h.core.jobs[1].accounts == {}


def test_memory_rss_is_the_worker_name_of_mem():
    h = one_host()
    h.submit(make_job(1))
    h.round()
    h.usage(1, memory_rss=G)
    assert list(h.core.jobs[1].accounts) == [("h1", "mem")]


def test_a_suspended_job_frees_its_slots_and_keeps_its_memory():
    h = one_host(slots=1)
    h.submit(make_job(1).rusage("mem=2G"), make_job(2))
    h.round()
    h.usage(1, memory_rss=3 * G)
    h.state(1, "USUSP")
    assert h.inuse("h1", "slots") == 0
    assert h.inuse("h1", "mem") == 3 * G
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]


def test_worker_reports_overwrite_values_and_never_clear_charges():
    h = one_host(mem="8G")
    h.submit(make_job(1).rusage("mem=5G"))
    h.round()
    # The worker now sees the job's memory gone from its free figure: both layers count it.
    h.resvals({"h1": {"mem": 3 * G}})
    assert h.inuse("h1", "mem") == 5 * G
    h.submit(make_job(2).rusage("mem=1G"))
    reason = h.round_decisions()[0].reasons[0]
    assert (reason.step, reason.resource) == ("rusage", "mem")
    h.resvals({"h1": {"mem": 8 * G}}, full=True)
    assert h.inuse("h1", "mem") == 5 * G


# -- admission with concrete numbers -------------------------------------------------------

def test_admission_formula_walkthrough():
    """total=8G, inuse=5G (job 1), wanted=4G: 8G < 5G + 0 + 4G, so refuse, short by 1G."""
    h = one_host(mem="8G")
    h.submit(make_job(1).rusage("mem=5G"))
    assert h.round() == [("DISPATCH", 1, (("h1", 1),))]
    h.submit(make_job(2).rusage("mem=4G"), make_job(3).rusage("mem=3G"))
    out = h.round_decisions()
    assert out[0].OP == "PEND"
    r = out[0].reasons[0]
    assert (r.step, r.resource, r.needed, r.short) == ("rusage", "mem", 4 * G, 1 * G)
    assert r.text == "needs mem 4G, short by mem 1G (closest host has 3G)"
    # 8G = 5G + 3G exactly: admitted (refuse only when total < inuse + wanted).
    assert out[1].OP == "DISPATCH" and out[1].jobid == 3


def test_a_large_maxmem_with_little_mem_refuses():
    h = Harness()
    h.hosts(make_host("big").slots(8).maxmem("512G").value("mem", 2 * G))
    h.submit(make_job(1).rusage("mem=4G"))
    r = h.round_decisions()[0].reasons[0]
    assert r.text == "needs mem 4G, short by mem 2G (closest host has 2G)"


def test_rusage_is_per_task_on_each_host():
    h = Harness()
    h.hosts(make_host("a").slots(4).mem("3G"), make_host("b").slots(4).mem("8G"))
    h.submit(make_job(1).tasks(4).rusage("mem=2G"))
    # a can hold one 2G task (3G), b four: 1 x 4 fits on b.
    assert h.round() == [("DISPATCH", 1, (("b", 4),))]
    assert h.inuse("b", "mem") == 8 * G
