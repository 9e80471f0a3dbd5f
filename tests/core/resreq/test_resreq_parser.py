import pickle

import pytest

import xce.core.resreq.select as select_mod
from xce.core.resreq import (
    Binary,
    Compound,
    Defined,
    Name,
    Num,
    Primary,
    Request,
    RequestSyntaxError,
    Str,
    Unary,
    parse_request,
)

MiB = 1024**2
GiB = 1024**3


def sel(text):
    """The select expression of a plain primary."""
    return parse_request(f"select[{text}]").alternatives[0].primaries[0].select


def prim(text, tasks=1):
    request = parse_request(text, tasks)
    assert request.kind == "PRIMARY"
    return request.alternatives[0].primaries[0]


# -- empty and plain ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_text_is_one_empty_primary(text):
    request = parse_request(text, 3)
    assert request == Request((Compound((Primary(3, None, (), (), None, None),)),))
    assert request.kind == "PRIMARY"
    assert str(request) == ""
    assert request.total_tasks == 3
    assert request.max_tasks == 3


def test_default_tasks_applies_to_plain_primary():
    assert prim("select[a > 1]", 7).tasks == 7
    assert prim("select[a > 1]").tasks == 1


# -- select: operators and precedence ------------------------------------------------------


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_comparison_operators(op):
    assert sel(f"ncpus {op} 4") == Binary(op, Name("ncpus"), Num(4))
    assert sel(f"ncpus{op}4") == Binary(op, Name("ncpus"), Num(4))


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_arithmetic_operators(op):
    assert sel(f"a {op} b > 1") == Binary(">", Binary(op, Name("a"), Name("b")), Num(1))


def test_precedence_or_and_not():
    a, b, c = Name("a"), Name("b"), Name("c")
    assert sel("a || b && c") == Binary("||", a, Binary("&&", b, c))
    assert sel("a && b || c") == Binary("||", Binary("&&", a, b), c)
    assert sel("!a && b") == Binary("&&", Unary("!", a), b)
    assert sel("!(a && b)") == Unary("!", Binary("&&", a, b))


def test_precedence_arithmetic_and_comparison():
    a, b, c, d = Name("a"), Name("b"), Name("c"), Name("d")
    assert sel("a + b * c > d") == Binary(">", Binary("+", a, Binary("*", b, c)), d)
    assert sel("(a + b) * c > d") == Binary(">", Binary("*", Binary("+", a, b), c), d)
    assert sel("a - b - c") == Binary("-", Binary("-", a, b), c)
    assert sel("a / b * c") == Binary("*", Binary("/", a, b), c)
    assert sel("a > 1 && b < 2 || c == 3") == Binary(
        "||", Binary("&&", Binary(">", a, Num(1)), Binary("<", b, Num(2))), Binary("==", c, Num(3))
    )
    assert sel("-a * b") == Binary("*", Unary("-", a), b)


def test_unary_minus_folds_into_literal():
    assert sel("a > -5") == Binary(">", Name("a"), Num(-5))
    assert sel("a > --5") == Binary(">", Name("a"), Num(5))
    assert sel("a > -(5)") == Binary(">", Name("a"), Num(-5))
    assert sel("a - -1.5") == Binary("-", Name("a"), Num(-1.5))
    assert sel("-a") == Unary("-", Name("a"))


def test_numbers():
    assert sel("a > 12") == Binary(">", Name("a"), Num(12))
    assert type(sel("a > 12").right.value) is int
    assert sel("a > 1.5") == Binary(">", Name("a"), Num(1.5))
    # A decimal that is whole is an int.
    assert type(sel("a > 2.0").right.value) is int
    assert sel("a > 0.1").right.value == 0.1


def test_units_in_select_for_non_memory():
    assert sel("a > 4G").right == Num(4 * GiB)
    assert sel("a > 1K").right == Num(1024)
    assert sel("a > 2M").right == Num(2 * MiB)
    assert sel("a > 1T").right == Num(1024**4)
    assert sel("a > 1.5K").right == Num(1536)
    assert sel("a > 0.3K").right == Num(307.2)
    # no unit: plain number
    assert sel("a > 4000").right == Num(4000)


def test_memory_bare_literal_is_mib_in_select():
    assert sel("mem > 4000") == Binary(">", Name("mem"), Num(4000 * MiB))
    assert sel("4000 < maxmem") == Binary("<", Num(4000 * MiB), Name("maxmem"))
    assert sel("swp >= 0.5") == Binary(">=", Name("swp"), Num(512 * 1024))
    assert sel("mem > -2") == Binary(">", Name("mem"), Num(-2 * MiB))
    assert sel("mem > (3)") == Binary(">", Name("mem"), Num(3 * MiB))
    # a unit always means bytes
    assert sel("mem > 4G") == Binary(">", Name("mem"), Num(4 * GiB))
    assert sel("mem > 100K") == Binary(">", Name("mem"), Num(100 * 1024))
    # arithmetic is not a bare literal, and non-memory names do not scale
    assert sel("mem > 2 * 1000") == Binary(">", Name("mem"), Binary("*", Num(2), Num(1000)))
    assert sel("mem / 2 > 1000") == Binary(">", Binary("/", Name("mem"), Num(2)), Num(1000))
    assert sel("ncpus > 4000") == Binary(">", Name("ncpus"), Num(4000))


def test_memory_select_prints_with_units():
    assert str(parse_request("select[mem > 4000]")) == "select[mem > 4000M]"
    assert str(parse_request("select[mem > 4096]")) == "select[mem > 4G]"
    assert str(parse_request("select[mem > 0.1]")) == "select[mem > 102.4K]"
    assert str(parse_request("select[mem > 0]")) == "select[mem > 0]"
    assert str(parse_request("select[mem > -1]")) == "select[mem > -1M]"


def test_strings():
    assert sel('type == "LINUX64"') == Binary("==", Name("type"), Str("LINUX64"))
    assert sel('model != "a b"') == Binary("!=", Name("model"), Str("a b"))
    assert sel(r'model == "say \"hi\" \\ "') == Binary("==", Name("model"), Str('say "hi" \\ '))
    assert str(parse_request(r'select[model == "q\"\\"]')) == r'select[model == "q\"\\"]'


def test_defined():
    assert sel("defined(example.com/gpu)") == Defined("example.com/gpu")
    assert sel("defined( linux ) && !defined(xce.io/cpu-milli)") == Binary(
        "&&", Defined("linux"), Unary("!", Defined("xce.io/cpu-milli"))
    )
    # "defined" without parentheses is an ordinary name
    assert sel("defined > 1") == Binary(">", Name("defined"), Num(1))


def test_domain_names_versus_division():
    assert sel("example.com/gpu >= 2") == Binary(">=", Name("example.com/gpu"), Num(2))
    assert sel("xce.io/cpu-milli > 500") == Binary(">", Name("xce.io/cpu-milli"), Num(500))
    assert sel("my-site.example.org/gpu.a100 > 0") == Binary(">", Name("my-site.example.org/gpu.a100"), Num(0))
    assert sel("mem/2 > 1") == Binary(">", Binary("/", Name("mem"), Num(2)), Num(1))
    assert sel("1.5/2 > a") == Binary(">", Binary("/", Num(1.5), Num(2)), Name("a"))
    assert sel("example.com/gpu/2 > 1") == Binary(">", Binary("/", Name("example.com/gpu"), Num(2)), Num(1))
    # "-" belongs to a resource name; spaces make it a subtraction
    assert sel("example.com/gpu-1 > 0") == Binary(">", Name("example.com/gpu-1"), Num(0))
    assert sel("example.com/gpu - 1 > 0") == Binary(">", Binary("-", Name("example.com/gpu"), Num(1)), Num(0))
    assert sel("cfd-cores > 0") == Binary(">", Binary("-", Name("cfd"), Name("cores")), Num(0))


def test_select_names():
    p = prim("select[b > 1 && defined(example.com/gpu) || a + b > mem && !z]")
    assert p.select_names() == ("a", "b", "example.com/gpu", "mem", "z")
    assert prim("").select_names() == ()


# -- order ------------------------------------------------------------------------------------


def test_order_several_keys_colon_and_comma():
    expected = (Unary("-", Name("ut")), Name("r1m"), Binary("*", Name("mem"), Num(2)))
    assert prim("order[-ut:r1m:mem*2]").order == expected
    assert prim("order[ -ut , r1m , mem * 2 ]").order == expected
    assert prim("order[-ut,r1m:mem*2]").order == expected
    assert str(parse_request("order[-ut , r1m]")) == "order[-ut:r1m]"


def test_order_key():
    p = prim("order[-ut:r1m:name_x:ncpus*2]")
    host = {"ut": 0.25, "r1m": 3, "name_x": "abc", "ncpus": 8}
    assert p.order_key(host.get) == (-0.25, 3, 0, 16)
    assert p.order_key({}.get) == (0, 0, 0, 0)
    assert prim("").order_key({}.get) == ()


# -- rusage -------------------------------------------------------------------------------------


def test_rusage_order_colon_comma_and_units():
    p = prim("rusage[mem=4000:example.com/gpu=2, xce.io/cpu-milli=500,swp=1G]")
    assert p.rusage == (
        ("mem", 4000 * MiB),
        ("example.com/gpu", 2),
        ("xce.io/cpu-milli", 500),
        ("swp", GiB),
    )
    assert p.rusage_amount("example.com/gpu") == 2
    assert p.rusage_amount("ncpus") == 0


@pytest.mark.parametrize(
    "text, amount",
    [
        ("mem=4000", 4000 * MiB),
        ("mem=4G", 4 * GiB),
        ("mem=0.5G", GiB // 2),
        ("mem=1.5", 3 * MiB // 2),
        ("mem=100K", 102400),
        ("mem=0", 0),
        ("maxmem=2T", 2 * 1024**4),
        ("mem=0.0009765625K", 1),
    ],
)
def test_rusage_memory_units(text, amount):
    name = text.split("=")[0]
    assert prim(f"rusage[{text}]").rusage == ((name, amount),)


def test_rusage_non_memory_units_multiply():
    assert prim("rusage[example.com/scratch=2K]").rusage == (("example.com/scratch", 2048),)
    assert prim("rusage[example.com/scratch=0.5K]").rusage == (("example.com/scratch", 512),)
    assert prim("rusage[slots=3]").rusage == (("slots", 3),)
    assert type(prim("rusage[example.com/gpu=2.0]").rusage[0][1]) is int


def test_rusage_prints_canonical():
    text = "rusage[mem=4000, example.com/gpu=2,swp=4096:maxmem=1.5K:mem2.example.com/x=3]"
    assert str(parse_request(text)) == "rusage[mem=4000M:example.com/gpu=2:swp=4G:maxmem=1.5K:mem2.example.com/x=3]"


# -- span ---------------------------------------------------------------------------------------


def test_span():
    p = prim("span[hosts=1]")
    assert (p.span_hosts, p.span_ptile, p.span) == (1, None, ("hosts", 1))
    p = prim("span[ ptile = 8 ]")
    assert (p.span_hosts, p.span_ptile, p.span) == (None, 8, ("ptile", 8))
    assert prim("").span is None


def test_all_clauses_any_order():
    a = prim("span[ptile=2] rusage[mem=1G] order[ut] select[ncpus>=4]", 4)
    b = prim("select[ncpus >= 4]order[ut]rusage[mem=1024]span[ptile=2]", 4)
    assert a == b == Primary(4, Binary(">=", Name("ncpus"), Num(4)), (Name("ut"),), (("mem", GiB),), None, 2)
    assert str(parse_request("span[ptile=2] rusage[mem=1G] order[ut] select[ncpus>=4]")) == (
        "select[ncpus >= 4] order[ut] rusage[mem=1G] span[ptile=2]"
    )


# -- compound and alternatives -----------------------------------------------------------------


def test_compound_tasks_per_primary():
    request = parse_request("2*{select[a > 1]} + 4*{rusage[mem=1G]}", 99)
    assert request.kind == "COMPOUND"
    assert request == Request(
        (
            Compound(
                (
                    Primary(2, Binary(">", Name("a"), Num(1))),
                    Primary(4, None, (), (("mem", GiB),)),
                )
            ),
        )
    )
    assert request.total_tasks == 6
    assert request.max_tasks == 6
    assert str(request) == "2*{select[a > 1]} + 4*{rusage[mem=1G]}"


def test_compound_default_tasks_for_terms_without_multiplier():
    request = parse_request("{select[a>1]} + 3*{}", 5)
    assert [p.tasks for p in request.primaries] == [5, 3]
    assert str(request) == "5*{select[a > 1]} + 3*{}"


def test_alternatives_of_plain_primaries():
    request = parse_request("{select[a>1]} || {select[b>1]}", 2)
    assert request.kind == "ALTER"
    assert request == Request(
        (
            Compound((Primary(2, Binary(">", Name("a"), Num(1))),)),
            Compound((Primary(2, Binary(">", Name("b"), Num(1))),)),
        )
    )
    assert str(request) == "2*{select[a > 1]} || 2*{select[b > 1]}"


def test_alternative_with_compound_inside():
    request = parse_request("{2*{select[a>1]} + 1*{select[b>1]}} || {4*{}}", 9)
    assert request.kind == "ALTER"
    assert [[p.tasks for p in c.primaries] for c in request.alternatives] == [[2, 1], [4]]
    assert request.total_tasks == 3
    assert request.max_tasks == 4
    # braces around a compound are optional
    assert parse_request("2*{select[a>1]} + 1*{select[b>1]} || 4*{}", 1) == request


def test_single_braced_primary_is_primary():
    request = parse_request("3*{select[a>1]}", 5)
    assert request.kind == "PRIMARY"
    assert request.primaries[0].tasks == 3
    assert str(request) == "select[a > 1]"
    assert request.format(explicit_tasks=True) == "3*{select[a > 1]}"
    assert parse_request("{{}}", 2) == parse_request("", 2)


# -- interning and compiled-select reuse ----------------------------------------------------------


def test_interning():
    text = "select[ncpus > 2] rusage[mem=10]"
    a = parse_request(text, 4)
    assert parse_request(text, 4) is a
    b = parse_request(text, 5)
    assert b is not a
    assert b != a
    assert b.primaries[0].tasks == 5


def test_compiled_select_is_reused(monkeypatch):
    calls = []
    real = select_mod.compile_predicate

    def counting(expr):
        calls.append(expr)
        return real(expr)

    monkeypatch.setattr(select_mod, "compile_predicate", counting)
    p = prim("select[interning_probe_x > 1 && interning_probe_y == 2]")
    assert p._select_fn is None
    assert p.evaluate_select({"interning_probe_x": 2, "interning_probe_y": 2}.get) is True
    first = p._select_fn
    assert first is not None
    assert p.evaluate_select({"interning_probe_x": 0, "interning_probe_y": 2}.get) is False
    assert p._select_fn is first
    assert len(calls) == 1
    # the interned request carries the compiled select to every later parse
    again = prim("select[interning_probe_x > 1 && interning_probe_y == 2]")
    assert again is p
    again.evaluate_select({}.get)
    assert len(calls) == 1


def test_compiled_cache_not_part_of_equality_and_dropped_on_pickle():
    p = prim("select[pickle_probe > 1] order[ut]")
    p.evaluate_select({"pickle_probe": 3}.get)
    p.order_key({}.get)
    clone = pickle.loads(pickle.dumps(p))
    assert clone == p
    assert hash(clone) == hash(p)
    assert clone._select_fn is None
    assert clone.evaluate_select({"pickle_probe": 3}.get) is True
    request = parse_request("2*{select[a>1]} + 1*{}")
    request.primaries[0].evaluate_select({}.get)
    assert pickle.loads(pickle.dumps(request)) == request


def test_hashable():
    r1 = parse_request("2*{select[a>1] rusage[mem=1]} || 3*{}")
    r2 = Request(
        (
            Compound((Primary(2, Binary(">", Name("a"), Num(1)), (), (("mem", MiB),)),)),
            Compound((Primary(3),)),
        )
    )
    assert r1 == r2
    assert {r1: 1}[r2] == 1


def test_bad_tasks_argument():
    with pytest.raises(ValueError):
        parse_request("", 0)
    with pytest.raises(TypeError):
        parse_request("", True)
    with pytest.raises(TypeError):
        parse_request(None)


# -- errors ------------------------------------------------------------------------------------------


def err(text):
    with pytest.raises(RequestSyntaxError) as info:
        parse_request(text)
    return info.value


def test_error_message_format():
    e = err("select[mem >]")
    assert str(e) == 'resource requirement "select[mem >]" column 13: expected a number, a name or "(" but found "]"'
    assert (e.text, e.column, e.expected) == ("select[mem >]", 13, 'a number, a name or "("')
    assert isinstance(e, ValueError)
    clone = pickle.loads(pickle.dumps(e))
    assert (clone.text, clone.column, clone.expected, str(clone)) == (e.text, e.column, e.expected, str(e))


@pytest.mark.parametrize(
    "text, column, expected",
    [
        ("select[a>1", 11, 'an operator or "]"'),
        ("select[a>1]]", 12, "a clause (select, order, rusage or span) or end of text"),
        ("select a>1", 8, '"[" after select'),
        ("selct[a>1]", 1, "a clause (select, order, rusage or span)"),
        ("Select[a>1]", 1, "a clause (select, order, rusage or span)"),
        ("select[]", 8, 'a number, a name or "("'),
        ("select[(a>1]", 12, 'an operator or ")"'),
        ("select[a>1] select[b>1]", 13, 'no second "select" clause in one primary'),
        ("span[ptile=1] span[hosts=1]", 15, 'no second "span" clause in one primary'),
        ("span[hosts=2]", 12, "1"),
        ("span[ptile=0]", 12, "a whole number of at least 1"),
        ("span[ptile=1.5]", 12, "a whole number of at least 1"),
        ("span[tiles=2]", 6, '"hosts" or "ptile"'),
        ("span[hosts=1", 13, '"]"'),
        ("0*{}", 1, "a task count of at least 1"),
        ("2{}", 2, '"*" after the task count'),
        ("2*select[a]", 3, '"{"'),
        ("{select[a>1]", 13, 'a clause (select, order, rusage or span) or "}"'),
        ("{} +", 5, '"{" or a task count such as 2*{'),
        ("{} ||", 6, '"{" or a task count such as 2*{'),
        ("{}}", 3, '"||", "+" or end of text'),
        ("select[a>1] + {}", 13, "a clause (select, order, rusage or span) or end of text"),
        ("2*{1*{}}", 4, "a clause (select, order, rusage or span) (a task count applies to one primary, not to a nested group)"),
        ("{{} || {}}", 5, '"+" or "}"'),
        ("rusage[example.com/gpu=0.5]", 24, "a whole number"),
        ("rusage[mem=0.0000001]", 12, "a whole number of bytes"),
        ("rusage[mem=-1]", 12, "a non-negative quantity"),
        ("rusage[mem=4Gx]", 12, "a number with an optional unit K, M, G, T or P (powers of 1024)"),
        ("rusage[mem=4GBB]", 12, "a number with an optional unit K, M, G, T or P (powers of 1024)"),
        ("rusage[mem=]", 12, "a number with an optional unit K, M, G, T or P (powers of 1024)"),
        ("rusage[mem 4]", 12, '"="'),
        ("rusage[mem=1;swp=2]", 13, '":", "," or "]"'),
        ("rusage[mem=1:mem=2]", 14, "a resource not already in this rusage (one amount per resource)"),
        ("rusage[]", 8, "a resource name"),
        ("order[ut;r1m]", 9, 'an operator, ":" or "]"'),
        ("select[a > 1.5.2]", 12, "a number with an optional unit K, M, G, T or P (powers of 1024)"),
        ("select[a = 1]", 10, 'an operator or "]"'),
        ('select[type == "abc]', 16, "a closing '\"' for this string"),
        ("select[defined(1)]", 16, "a resource name"),
        ("select[defined(a]", 17, '")"'),
    ],
)
def test_error_columns(text, column, expected):
    e = err(text)
    assert (e.column, e.expected) == (column, expected), str(e)


def test_error_found_end_of_text():
    e = err("select[a >")
    assert str(e) == 'resource requirement "select[a >" column 11: expected a number, a name or "(" but found end of text'


@pytest.mark.parametrize(
    "text, rule_text",
    [
        ("rusage[cfd-cores=1]", '"a domain prefix is required"'),
        ("rusage[octomy/gpu=1]", '"the domain must contain a dot"'),
        ("rusage[example.com/-x=1]", "is malformed"),
    ],
)
def test_rusage_names_follow_naming_rules(text, rule_text):
    e = err(text)
    assert e.column == 8
    assert e.expected.startswith("a valid resource name (resource name ")
    assert rule_text in e.expected


def test_rusage_allows_reserved_domain_and_builtins():
    assert prim("rusage[xce.io/cpu-milli=500:ncpus=2]").rusage == (("xce.io/cpu-milli", 500), ("ncpus", 2))


def test_depth_limits_raise_syntax_error():
    assert err("select[" + "(" * 100 + "a" + ")" * 100 + "]").expected == "less nesting (at most 32 levels)"
    assert err("select[" + "!" * 100 + "a]").expected == "less nesting (at most 32 levels)"
    assert err("select[" + " + ".join(["a"] * 100) + "]").expected == "a simpler expression (at most 64 levels)"
    assert err("{" * 50 + "}" * 50).expected == "less nesting (at most 32 levels)"
    # within the limits is fine
    parse_request("select[" + " + ".join(["a"] * 60) + "]")


def test_huge_numbers_are_syntax_errors_not_crashes():
    assert err("select[a > " + "9" * 2000 + "]").expected == "a number of at most 1100 digits"
    assert err("select[a > " + "9" * 1050 + "]").expected == "a smaller number"
    assert err("select[a > " + "9" * 1000 + "." + "5" + "]").expected == "a smaller number"


@pytest.mark.parametrize("keyword", ["duration", "decay"])
def test_lsf_rusage_duration_and_decay_are_refused_by_name_with_what_to_do(keyword):
    with pytest.raises(RequestSyntaxError) as err:
        parse_request(f"rusage[mem=1G:{keyword}=10]", 1)
    message = str(err.value)
    assert f"rusage {keyword}= is not supported" in message and "domain prefix" not in message
    assert "remove duration= and decay=" in message and err.value.column == 15
