"""Round trip: random Requests print to text that parses back to an equal Request."""

from hypothesis import HealthCheck, example, given, settings, strategies as st

from xce.core.resources.naming import BUILTIN_RESOURCES, MEMORY_RESOURCES
from xce.core.resreq import Binary, Compound, Defined, Name, Num, Primary, Request, Str, Unary, parse_request

BUILTINS = sorted(BUILTIN_RESOURCES)
MEMORY = sorted(MEMORY_RESOURCES)
DOMAIN_NAMES = st.from_regex(
    r"[a-z][a-z0-9]{0,4}(-[a-z0-9]{1,3})?(\.[a-z0-9]{1,4}){1,2}/[A-Za-z0-9]([A-Za-z0-9._-]{0,5}[A-Za-z0-9])?",
    fullmatch=True,
)
IDENTIFIERS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
EXPR_NAMES = st.one_of(st.sampled_from(BUILTINS), st.sampled_from(MEMORY), IDENTIFIERS, DOMAIN_NAMES)
RUSAGE_NAMES = st.one_of(st.sampled_from(BUILTINS), DOMAIN_NAMES, st.sampled_from(["xce.io/cpu-milli", "xce.io/gpu"]))

NUMBERS = st.one_of(
    st.integers(min_value=-(10**15), max_value=10**15),
    st.integers(min_value=0, max_value=64).map(lambda k: 1024**k // 1024 * (k % 5 + 1)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda f: round(f, 3)),
)
LEAVES = st.one_of(
    NUMBERS.map(Num),
    st.text(max_size=8).map(Str),
    EXPR_NAMES.map(Name),
    EXPR_NAMES.map(Defined),
)
BINARY_OPS = ["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/"]


def _extend(children):
    # The parser folds "-<literal>" into a negative literal, so Unary("-") over a number
    # (directly or through another "-") is not a canonical tree and is not generated.
    negatable = children.filter(lambda e: not isinstance(e, Num) and not (isinstance(e, Unary) and e.op == "-"))
    return st.one_of(
        st.builds(Unary, st.just("!"), children),
        st.builds(Unary, st.just("-"), negatable),
        st.builds(Binary, st.sampled_from(BINARY_OPS), children, children),
        # memory comparisons against literals exercise the MiB default and unit printing
        st.builds(Binary, st.sampled_from(["==", "<", ">="]), st.sampled_from(MEMORY).map(Name), NUMBERS.map(Num)),
        st.builds(Binary, st.sampled_from(["!=", ">"]), NUMBERS.map(Num), st.sampled_from(MEMORY).map(Name)),
    )


EXPRS = st.recursive(LEAVES, _extend, max_leaves=10)


@st.composite
def rusages(draw):
    names = draw(st.lists(RUSAGE_NAMES, max_size=4, unique=True))
    items = []
    for name in names:
        if name in MEMORY_RESOURCES:
            amount = draw(st.one_of(st.integers(0, 2**50), st.integers(0, 4096).map(lambda m: m * 1024**2)))
        else:
            amount = draw(st.integers(0, 10**12))
        items.append((name, amount))
    return tuple(items)


@st.composite
def primaries(draw):
    span = draw(st.sampled_from(["none", "hosts", "ptile"]))
    return Primary(
        tasks=draw(st.integers(1, 5000)),
        select=draw(st.none() | EXPRS),
        order=tuple(draw(st.lists(EXPRS, max_size=3))),
        rusage=draw(rusages()),
        span_hosts=1 if span == "hosts" else None,
        span_ptile=draw(st.integers(1, 128)) if span == "ptile" else None,
    )


COMPOUNDS = st.lists(primaries(), min_size=1, max_size=3).map(lambda ps: Compound(tuple(ps)))
REQUESTS = st.lists(COMPOUNDS, min_size=1, max_size=3).map(lambda cs: Request(tuple(cs)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REQUESTS, st.integers(1, 64))
@example(Request((Compound((Primary(3, Binary(">", Name("mem"), Num(5))),)),)), 1)
@example(Request((Compound((Primary(1, Binary("<", Num(5e-324), Name("swp"))),)),)), 1)
@example(Request((Compound((Primary(1, Binary("-", Name("example.com/gpu"), Num(-1.5))),)),)), 1)
def test_round_trip(request, tasks):
    text = str(request)
    if request.kind == "PRIMARY":
        # a plain primary prints only its clauses: its task count comes from the caller
        tasks = request.alternatives[0].primaries[0].tasks
    parsed = parse_request(text, tasks)
    assert parsed == request, text
    # canonical text is a fixed point
    assert str(parsed) == text
    assert parse_request(request.format(explicit_tasks=True), 1) == request


@settings(max_examples=200, deadline=None)
@given(EXPRS)
def test_expression_round_trip(expr):
    text = f"select[{expr}]"
    assert parse_request(text).primaries[0].select == expr, text


@settings(max_examples=200, deadline=None)
@given(EXPRS, st.dictionaries(EXPR_NAMES, st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.text(max_size=2), st.booleans())))
def test_evaluation_never_raises_and_is_bool(expr, host):
    primary = Primary(1, expr, (expr,))
    result = primary.evaluate_select(host.get)
    assert type(result) is bool
    key = primary.order_key(host.get)
    assert len(key) == 1 and isinstance(key[0], (int, float))
