"""``select[hname==vm-w1]`` names a host: the word after ``hname ==`` is a name, never ``vm - w1``."""

from __future__ import annotations

from xce.core.resreq import Binary, Name, Str, parse_request
from xce.testing import Harness, make_host, make_job


def test_a_hyphenated_host_name_is_a_word_not_a_subtraction():
    (primary,) = parse_request("select[hname==vm-w1 && ncpus>2 || hname != node07.example.com]").primaries
    left, right = primary.select.left, primary.select.right
    assert left.left == Binary("==", Name("hname"), Str("vm-w1"))
    assert right == Binary("!=", Name("hname"), Str("node07.example.com"))
    # the canonical text quotes the word and reads back to the same tree
    again = parse_request(str(parse_request("select[hname==vm-w1]"))).primaries[0]
    assert again.select == Binary("==", Name("hname"), Str("vm-w1"))
    # elsewhere a hyphen still subtracts
    assert parse_request("select[mem-ut > 1]").primaries[0].select.left == Binary("-", Name("mem"), Name("ut"))
    assert parse_request("select[hname == a + b]").primaries[0].select.right == Binary("+", Name("a"), Name("b"))
    tree = Binary("==", Name("hname"), Name("b"))
    assert parse_request(f"select[{tree}]").primaries[0].select == tree


def test_a_job_selecting_a_host_by_name_runs_there():
    h = Harness()
    h.hosts(make_host("vm-w1").slots(4), make_host("vm-w2").slots(4))
    h.submit(make_job(1).select("hname==vm-w2"), make_job(2).select('hname == "vm-w1"'),
             make_job(3).select("hname==vm-w3"))
    placed = {d.jobid: d.placement for d in h.round_decisions() if type(d).__name__ == "Dispatch"}
    assert placed == {1: (("vm-w2", 1),), 2: (("vm-w1", 1),)}


def test_type_and_model_take_bare_words_as_in_lsf():
    (primary,) = parse_request("select[type==X86_64 && model != Intel_EM64T]").primaries
    assert primary.select == Binary("&&", Binary("==", Name("type"), Str("X86_64")),
                                    Binary("!=", Name("model"), Str("Intel_EM64T")))
    h = Harness()
    h.hosts(make_host("a").slots(1).value("type", "ARM64"), make_host("b").slots(1).value("type", "X86_64"))
    h.submit(make_job(1).select("type==X86_64"))
    placed = {d.jobid: d.placement for d in h.round_decisions() if type(d).__name__ == "Dispatch"}
    assert placed == {1: (("b", 1),)}
