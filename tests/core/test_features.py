"""Host features in the core: Slurm's ``--constraint`` grammar turned into the select language, and
features read as LSF's boolean resources when the core places a job."""

from __future__ import annotations

import pytest

from xce.core.features import ConstraintError, parse_constraint
from xce.testing import Harness, make_host, make_job


@pytest.mark.parametrize("text, select", [
    ("intel", "intel"),
    ("intel&ib", "intel && ib"),
    ("a|b&c", "a || b && c"),  # AND binds tighter, as in the select language
    ("(a|b)&c", "(a || b) && c"),
    (" a & ( b | c ) ", "a && (b || c)"),
    ("[rack1|rack2]", "rack1 || rack2"),
])
def test_the_grammar_becomes_a_select_expression(text, select):
    assert str(parse_constraint(text).expr) == select


def test_counts_and_brackets_are_reported_for_the_controller_to_judge():
    c = parse_constraint("[rack1*2&rack2*4]&ib")
    assert c.names == ("rack1", "rack2", "ib") and c.counts == (("rack1", 2), ("rack2", 4)) and c.matching
    assert parse_constraint("(knl&snc4)*4").counts == (("knl && snc4", 4),)
    plain = parse_constraint("a|b")
    assert plain.counts == () and not plain.matching


@pytest.mark.parametrize("text, where", [
    ("", "the constraint is empty"),
    ("a&", "found the end"),
    ("(a|b", "expected ')'"),
    ("a b", "found 'b' at column 3"),
    ("9lives", "expected a feature name"),
    ("a*x", "expected a node count after '*'"),
    ("a*0", "at least 1"),
    ("a,b", "found ',' at column 2"),
])
def test_a_constraint_that_does_not_parse_says_where_in_slurms_words(text, where):
    with pytest.raises(ConstraintError) as bad:
        parse_constraint(text)
    assert str(bad.value).startswith("Invalid feature specification: ") and where in str(bad.value)


def test_features_read_as_boolean_resources_when_the_core_places_jobs():
    h = Harness()
    h.hosts(make_host("a").slots(2).value("features", ["ib"]),
            make_host("b").slots(2).value("features", ["bigmem", "ib"]),
            make_host("c").slots(2))
    h.submit(make_job(1).select("bigmem"), make_job(2).select("ib && !bigmem"), make_job(3).select("!ib"),
             make_job(4).select(str(parse_constraint("bigmem|nosuch").expr)))
    assert h.round() == [("DISPATCH", 1, (("b", 1),)), ("DISPATCH", 2, (("a", 1),)),
                         ("DISPATCH", 3, (("c", 1),)), ("DISPATCH", 4, (("b", 1),))]
