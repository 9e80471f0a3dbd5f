"""Allocation scenarios (Reqs 3, 4, 7 and job-resources.md refusals), exact decision sequences."""

from xce.core.specs import ResourceDef
from xce.testing import Harness, make_host, make_job


def test_16_tasks_land_on_the_one_host_with_16_free():
    h = Harness()
    h.hosts(make_host("h1").slots(8), make_host("h2").slots(16), make_host("h3").slots(16))
    h.submit(make_job(1).tasks(16))
    assert h.round() == [("DISPATCH", 1, (("h2", 16),))]


def test_16_tasks_split_2x8_when_the_best_hosts_have_8():
    h = Harness()
    h.hosts(make_host("h1").slots(8), make_host("h2").slots(4), make_host("h3").slots(8))
    h.submit(make_job(1).tasks(16))
    assert h.round() == [("DISPATCH", 1, (("h1", 8), ("h3", 8)))]


def test_5_tasks_on_3_and_2_free_lands_3_plus_2():
    h = Harness()
    h.hosts(make_host("a").slots(3), make_host("b").slots(2))
    h.submit(make_job(1).tasks(5))
    assert h.round() == [("DISPATCH", 1, (("a", 3), ("b", 2)))]
    assert h.inuse("a", "slots") == 3 and h.inuse("b", "slots") == 2


def test_exactly_n_tasks_are_placed_never_k_times_p():
    h = Harness()
    h.hosts(*(make_host(f"h{i}").slots(3) for i in range(4)))
    h.submit(make_job(1).tasks(7))
    # p=4 fails (no host has 4), p=3: 3 + 3 + 1 = 7, not 3 x 3 = 9.
    assert h.round() == [("DISPATCH", 1, (("h0", 3), ("h1", 3), ("h2", 1)))]


def test_span_hosts_1_refuses_a_spread():
    h = Harness()
    h.hosts(make_host("h1").slots(8), make_host("h2").slots(8))
    h.submit(make_job(1).tasks(16).span("hosts=1"))
    decisions = h.round_decisions()
    assert [d.OP for d in decisions] == ["PEND"]
    reason = decisions[0].reasons[0]
    assert (reason.step, reason.resource, reason.needed, reason.short) == ("span", "slots", 16, 8)
    assert reason.text.startswith("needs slots 16, short by slots 8")


def test_select_and_order_choose_the_host():
    h = Harness()
    h.hosts(make_host("a").slots(4).mem("8G").value("type", "ARM64"),
            make_host("b").slots(4).mem("16G").value("type", "X86_64"),
            make_host("c").slots(4).mem("32G").value("type", "X86_64"))
    h.submit(make_job(1).select('type == "X86_64"'), make_job(2).request("order[-mem]"),
             make_job(3).request('select[type == "X86_64"] order[mem]'))
    assert h.round() == [("DISPATCH", 1, (("b", 1),)), ("DISPATCH", 2, (("c", 1),)),
                         ("DISPATCH", 3, (("b", 1),))]


def test_a_failed_compound_leaves_no_residue():
    h = Harness()
    h.hosts(make_host("h1").slots(8).mem("16G"), make_host("h2").slots(8).mem("16G"))
    h.submit(make_job(1).request('2*{rusage[mem=4G]} + 4*{select[type == "GPU"]}'))
    before = h.core.cluster.inuse_table()
    assert h.round() == [("PEND", 1, ("select",))]
    assert h.core.cluster.inuse_table() == before == {}
    h.submit(make_job(2).tasks(16))
    assert h.round()[-1] == ("DISPATCH", 2, (("h1", 8), ("h2", 8)))


def test_a_compound_places_every_primary_and_charges_each():
    h = Harness()
    h.hosts(make_host("h1").slots(4).mem("16G"), make_host("h2").slots(4).mem("16G"))
    h.submit(make_job(1).request("2*{rusage[mem=4G] span[hosts=1]} + 4*{}"))
    # The first primary packs 2 tasks on h1; the second (1 x 4 first) only fits on h2.
    assert h.round() == [("DISPATCH", 1, (("h1", 2), ("h2", 4)))]
    assert h.inuse("h1", "mem") == 8 * 1024**3
    assert h.inuse("h2", "mem") == 0


def test_an_alternative_falls_through_to_its_second_branch():
    h = Harness()
    h.hosts(make_host("x").slots(2).value("type", "X86_64"))
    h.submit(make_job(1).request('{select[type == "ARM64"]} || {select[type == "X86_64"]}'))
    assert h.round() == [("DISPATCH", 1, (("x", 1),))]


def test_unsatisfiable_cache_hit_carries_the_original_reason_and_names_the_prover():
    h = Harness()
    h.hosts(make_host("h1").slots(4).mem("8G"))
    h.submit(make_job(1).rusage("mem=16G"), make_job(2).rusage("mem=16G"))
    decisions = h.round_decisions()
    first, second = decisions
    assert first.reasons[0].step == second.reasons[0].step == "rusage"
    assert first.reasons[0].proven_by is None
    assert second.reasons[0].proven_by == 1
    assert "same request as job 1" in second.reasons[0].text
    assert (second.reasons[0].needed, second.reasons[0].short) == (16 * 1024**3, 8 * 1024**3)


def test_cache_hit_does_not_run_the_allocator(monkeypatch):
    from xce.core.alloc import allocator as mod

    h = Harness()
    h.hosts(make_host("h1").slots(1))
    h.submit(*(make_job(i).tasks(2).span("hosts=1") for i in range(1, 6)))
    calls = []
    original = mod.Allocator.allocate
    monkeypatch.setattr(mod.Allocator, "allocate", lambda self, r: calls.append(r) or original(self, r))
    assert [d[0] for d in h.round()] == ["PEND"] * 5
    assert len(calls) == 1


def test_one_task_job_is_not_pended_by_a_128_task_failure_with_the_same_strings():
    h = Harness()
    h.hosts(make_host("h1").slots(8).mem("64G"))
    h.submit(make_job(1).tasks(128).rusage("mem=1G"), make_job(2).tasks(1).rusage("mem=1G"))
    assert h.round() == [("PEND", 1, ("slots",)), ("DISPATCH", 2, (("h1", 1),))]


def test_an_unknown_resource_counts_as_zero():
    h = Harness()
    h.hosts(make_host("h1").slots(8))
    h.submit(make_job(1).rusage("example.com/widgets=1"))
    d = h.round_decisions()[0]
    reason = d.reasons[0]
    assert (reason.step, reason.resource, reason.needed, reason.short) == (
        "unknown-resource", "example.com/widgets", 1, 1)
    assert "counts as zero" in reason.text


def test_refusal_text_names_the_step_and_shortfall_against_the_closest_host():
    h = Harness()
    h.hosts(make_host("h1").slots(8).value("example.com/cfd-cores", 8),
            make_host("h2").slots(8).value("example.com/cfd-cores", 6))
    h.submit(make_job(1).rusage("example.com/cfd-cores=16"))
    reason = h.round_decisions()[0].reasons[0]
    assert reason.step == "rusage"
    assert reason.text.startswith("needs example.com/cfd-cores 16, short by example.com/cfd-cores 8")


def test_spread_shortfall_is_measured_against_the_candidates_total():
    h = Harness()
    h.hosts(make_host("h1").slots(8).value("example.com/cfd-cores", 8),
            make_host("h2").slots(8).value("example.com/cfd-cores", 6))
    h.submit(make_job(1).tasks(4).rusage("example.com/cfd-cores=5"))
    reason = h.round_decisions()[0].reasons[0]
    assert (reason.needed, reason.short) == (20, 6)
    assert "candidate hosts have 14" in reason.text


def test_shared_pool_licenses_are_one_cluster_wide_count():
    h = Harness(resources=[ResourceDef("example.com/license", consumable=True, shared=True, total=3)])
    h.hosts(make_host("h1").slots(4), make_host("h2").slots(4))
    h.submit(make_job(1).tasks(2).rusage("example.com/license=1"),
             make_job(2).tasks(2).rusage("example.com/license=1"))
    out = h.round_decisions()
    assert [d.OP for d in out] == ["DISPATCH", "PEND"]
    assert out[1].reasons[0].step == "shared"
    assert out[1].reasons[0].short == 1
    h.state(1, "DONE")
    assert h.round() == [("DISPATCH", 2, (("h1", 2),))]


def test_an_unavailable_host_gets_no_work():
    h = Harness()
    h.hosts(make_host("a").slots(4).down(), make_host("b").slots(4))
    h.submit(make_job(1))
    assert h.round() == [("DISPATCH", 1, (("b", 1),))]


def test_a_malformed_request_pends_with_the_parse_error():
    h = Harness()
    h.hosts(make_host("a").slots(4))
    h.submit(make_job(1).request("select[mem >]"))
    d = h.round_decisions()[0]
    assert d.reasons[0].step == "request"
    assert "column" in d.reasons[0].text


def test_a_pend_is_emitted_when_its_reason_changes_not_every_round():
    h = Harness()
    h.hosts(make_host("h1").slots(2).mem("8G"))
    h.submit(make_job(1).tasks(2), make_job(2).rusage("mem=4G"))
    assert h.round() == [("DISPATCH", 1, (("h1", 2),)), ("PEND", 2, ("slots",))]
    assert h.round() == []  # same reason: nothing new to say
    h.resvals({"h1": {"mem": 2 * 1024**3}})
    assert h.round() == []  # values changed, the job was tried again, still short of slots
    h.state(1, "DONE")
    out = h.round_decisions()
    assert [(d.OP, d.jobid) for d in out] == [("PEND", 2)]
    assert out[0].reasons[0].text == "needs mem 4G, short by mem 2G (closest host has 2G)"


def test_nothing_released_means_the_allocator_is_not_run_again(monkeypatch):
    from xce.core.alloc import allocator as mod

    h = Harness()
    h.hosts(make_host("h1").slots(2).mem("4G"))
    h.submit(make_job(1).rusage("mem=3G"), make_job(2).rusage("mem=2G"))
    calls = []
    original = mod.Allocator.allocate
    monkeypatch.setattr(mod.Allocator, "allocate", lambda self, r: calls.append(r) or original(self, r))
    assert [d[0] for d in h.round()] == ["DISPATCH", "PEND"]
    assert len(calls) == 2
    h.submit(make_job(3))  # the new job is tried; job 2 is not: nothing was released
    assert h.round() == [("DISPATCH", 3, (("h1", 1),))]
    assert len(calls) == 3
    h.state(3, "DONE")  # a release: job 2 is tried again, still short of memory
    assert h.round() == []
    assert len(calls) == 4
    h.state(1, "DONE")
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]


def test_fewer_free_slots_than_a_job_needs_skips_the_allocator(monkeypatch):
    from xce.core.alloc import allocator as mod

    h = Harness()
    h.hosts(make_host("h1").slots(2), make_host("h2").slots(2))
    h.submit(make_job(1).tasks(3), make_job(2).tasks(4))
    assert [d[0] for d in h.round()] == ["DISPATCH", "PEND"]
    calls = []
    original = mod.Allocator.allocate
    monkeypatch.setattr(mod.Allocator, "allocate", lambda self, r: calls.append(r) or original(self, r))
    h.resvals({"h1": {"r1m": 0.5}})  # new values: capacity may have changed, but only 1 slot is free
    assert h.round() == []
    assert calls == []
    h.state(1, "DONE")
    assert h.round() == [("DISPATCH", 2, (("h1", 2), ("h2", 2)))]
    assert len(calls) == 1


def test_hosts_pushed_out_of_name_order_are_walked_in_name_order():
    """Req 3: the default host order is by name, whatever order the workers registered in."""
    h = Harness()
    h.hosts(make_host("hc").slots(2), make_host("ha").slots(2))
    h.hosts(make_host("hb").slots(2))  # registers last, sorts between the others
    h.submit(make_job(1), make_job(2).tasks(4))
    assert h.round() == [("DISPATCH", 1, (("ha", 1),)), ("DISPATCH", 2, (("hb", 2), ("hc", 2)))]


def test_a_host_added_later_takes_its_place_by_name_for_single_task_jobs():
    h = Harness()
    h.hosts(make_host("hz").slots(1))
    h.hosts(make_host("hb").slots(1))
    h.submit(make_job(1))
    assert h.round() == [("DISPATCH", 1, (("hb", 1),))]


def test_a_compound_names_the_resource_its_later_part_is_short_of():
    """job-resources.md, "what a refusal tells you": the step that refused and the amount short.
    The second part alone would fit; beside the first, memory is what is short, not slots."""
    h = Harness()
    h.hosts(make_host("h1").slots(4).mem("8G"))
    h.submit(make_job(1).request("{rusage[mem=2G]} + 2*{rusage[mem=4G]}"))
    (d,) = h.round_decisions()
    (r,) = d.reasons
    assert (r.step, r.resource, r.short) == ("rusage", "mem", 2 * 1024**3)
    assert r.text == "needs mem 8G, short by mem 2G (candidate hosts have 6G after its first part)"


def test_a_per_host_amount_is_charged_once_on_each_host_whatever_its_tasks():
    """``rusage[NAME=V/host]`` (LSF's per-host reservation: GPUs per host): 8 tasks with 1 GPU per
    host take one GPU of their host, not eight, and a host without one is passed over."""
    h = Harness()
    h.hosts(make_host("a").slots(8).value("example.com/gpu", 0), make_host("b").slots(8).value("example.com/gpu", 2),
            make_host("c").slots(8).value("example.com/gpu", 1))
    h.submit(make_job(1).tasks(8).request("rusage[example.com/gpu=1/host] span[hosts=1]"),
             make_job(2).tasks(8).request("rusage[example.com/gpu=1/host] span[hosts=1]"),
             make_job(3).tasks(2).request("rusage[example.com/gpu=1/host] span[ptile=1]"))
    # job 3 needs a GPU on each of two hosts: b has one left, but no slot
    assert h.round() == [("DISPATCH", 1, (("b", 8),)), ("DISPATCH", 2, (("c", 8),)), ("PEND", 3, ("span",))]
    assert h.inuse("b", "example.com/gpu") == 1 and h.inuse("c", "example.com/gpu") == 1


def test_a_per_host_amount_reads_back_as_written():
    from xce.core.resreq import parse_request

    request = parse_request("rusage[mem=1G:example.com/gpu=2/host] span[hosts=1]", 4)
    (primary,) = request.primaries
    assert primary.rusage == (("mem", 1 << 30),) and primary.rusage_host == (("example.com/gpu", 2),)
    assert parse_request(request.format(), 4) == request
