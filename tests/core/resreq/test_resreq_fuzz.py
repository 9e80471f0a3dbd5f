"""Fuzzing: any text either parses or raises RequestSyntaxError - never anything else.

Whatever parses must also survive printing, re-parsing and evaluation, since the
scheduler stores canonical text and evaluates it against arbitrary hosts.
"""

from hypothesis import HealthCheck, given, settings, strategies as st

from xce.core.resreq import RequestSyntaxError, parse_request

VALID = [
    "",
    "select[mem > 4000 && example.com/gpu >= 1] order[-ut:r1m] rusage[mem=4G,example.com/gpu=2] span[ptile=4]",
    "2*{select[a > 1]} + 4*{rusage[mem=0.5G]}",
    "{2*{select[a>1]} + 1*{select[b>1]}} || {4*{}}",
    'select[mem/2 > 1.5 || !linux && type == "X86" || defined(xce.io/cpu-milli)]',
    "select[mem > -4000 && mem < 0.1 && 1.5K < maxmem] span[hosts=1]",
    "{select[(a + b) * -c != 3.25]} || 3*{rusage[swp=1T:slots=2]}",
    'order[ncpus * 2, -mem] select["a\\"b" == model]',
]
GRAMMAR_CHARS = st.sampled_from(
    list("{}[]()*+-/!<>=&|:,.\"\\ 0123456789KMGTabemnorstuly_")
    + ["select[", "order[", "rusage[", "span[", "hosts=", "ptile=", "mem", "||", "&&", "==", "defined(",
       "example.com/gpu", "xce.io/", "2*{", "}", "]", " ", "4G", "0.5", "\u0663", "\u00b2", "\u2003"]
)


def check(text, tasks=1):
    try:
        request = parse_request(text, tasks)
    except RequestSyntaxError as exc:
        assert 1 <= exc.column <= len(text) + 1
        assert exc.expected
        assert str(exc).startswith(f'resource requirement "{text}" column {exc.column}: expected ')
        return
    canonical = str(request)
    if request.kind == "PRIMARY":
        tasks = request.primaries[0].tasks
    again = parse_request(canonical, tasks)
    assert again == request, (text, canonical)
    assert str(again) == canonical
    for compound in request.alternatives:
        for primary in compound.primaries:
            assert type(primary.evaluate_select({"a": 1, "mem": 10**9, "type": "X86"}.get)) is bool
            primary.order_key({}.get)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_arbitrary_text(text):
    check(text)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(GRAMMAR_CHARS, max_size=30).map("".join), st.integers(1, 8))
def test_grammar_soup(text, tasks):
    check(text, tasks)


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "swap"]))
        pos = draw(st.integers(0, len(text)))
        if kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 5)) :]
        elif kind == "insert":
            text = text[:pos] + draw(GRAMMAR_CHARS) + text[pos:]
        elif kind == "replace":
            text = text[:pos] + draw(GRAMMAR_CHARS) + text[pos + 1 :]
        elif kind == "duplicate":
            end = draw(st.integers(pos, len(text)))
            text = text[:end] + text[pos:end] + text[end:]
        else:
            end = draw(st.integers(pos, len(text)))
            text = text[pos:end] + text[:pos] + text[end:]
    return text


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.integers(1, 8))
def test_mutations_of_valid_strings(text, tasks):
    check(text, tasks)


def test_valid_seeds_parse():
    for text in VALID:
        parse_request(text, 2)
        check(text, 2)


def test_hostile_inputs():
    for text in [
        "(" * 5000,
        "{" * 5000,
        "select[" + "-" * 5000 + "1]",
        "select[" + "!" * 5000 + "a]",
        "select[" + "a+" * 5000 + "a]",
        "select[a > " + "9" * 5000 + "]",
        "select[a > 0." + "0" * 5000 + "1]",
        "rusage[mem=" + "9" * 5000 + "]",
        "99999999999999999999999999*{}",
        "span[ptile=" + "9" * 5000 + "]",
        "select[mem > 0." + "0" * 1000 + "1]",
        "select[a > 1" + "0" * 1099 + ".5]",
        "\x00",
        "select[\ud800]",
    ]:
        check(text)
