import pytest

from xce.core.resreq import Binary, Name, Num, Primary, Str, Unary, parse_request
from xce.core.resreq.select import compile_predicate, compile_value

MiB = 1024**2

HOST = {
    "ncpus": 16,
    "mem": 64 * 1024**3,
    "maxmem": 128 * 1024**3,
    "ut": 0.25,
    "type": "X86_64",
    "model": "",
    "linux": True,
    "gpu_off": False,
    "zero": 0,
    "example.com/gpu": 4,
    "xce.io/cpu-milli": 16000,
}


def ev(text, host=HOST):
    p = parse_request(f"select[{text}]").primaries[0]
    return p.evaluate_select(host.get)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ncpus == 16", True),
        ("ncpus != 16", False),
        ("ncpus < 16", False),
        ("ncpus <= 16", True),
        ("ncpus > 15", True),
        ("ncpus >= 17", False),
        ("16 == ncpus", True),
        ("17 > ncpus", True),
        ("15 > ncpus", False),
        ("ncpus > 8 && ut < 0.5", True),
        ("ncpus > 32 || ut < 0.5", True),
        ("ncpus > 32 || ut > 0.5", False),
        ("!(ncpus > 32)", True),
        ("ncpus * 2 == 32", True),
        ("ncpus / 32 == 0.5", True),
        ("ncpus - 1 == 15", True),
        ("ncpus + -1 == 15", True),
        ("-ncpus < 0", True),
        ("example.com/gpu >= 4", True),
        ("example.com/gpu/2 == 2", True),
        ("xce.io/cpu-milli > 15999", True),
        ("1 + 2 * 3 == 7", True),
        ("(1 + 2) * 3 == 9", True),
        ("1 == 1 == 1", True),  # (1 == 1) is True, which equals 1
    ],
)
def test_numeric(text, expected):
    assert ev(text) is expected


def test_memory_mib_default_in_select():
    assert ev("mem > 65535") is True  # 64 GiB > 65535 MiB
    assert ev("mem > 65536") is False
    assert ev("mem >= 65536") is True
    assert ev("mem == 64G") is True
    assert ev("65536 == mem") is True
    assert ev("maxmem > 2 * 65536") is True  # arithmetic: compared in bytes
    assert ev("mem > 64G - 1") is True


def test_strings():
    assert ev('type == "X86_64"') is True
    assert ev('type != "X86_64"') is False
    assert ev('type != "ARM"') is True
    assert ev('"X86_64" == type') is True
    # ordering on strings is always false
    assert ev('type > "A"') is False
    assert ev('type < "Z"') is False
    assert ev('type >= type') is False
    # string vs number: unequal
    assert ev("type == 5") is False
    assert ev("type != 5") is True
    assert ev('ncpus == "16"') is False
    assert ev('ncpus != "16"') is True
    # arithmetic with strings is undefined -> comparisons false
    assert ev("type + 1 > 0") is False
    assert ev("type + 1 != 0") is False
    # truthiness of strings
    assert ev("type") is True
    assert ev("model") is False
    assert ev('"x"') is True


def test_undefined_names():
    assert ev("nosuch > 1") is False
    assert ev("nosuch < 1") is False
    assert ev("nosuch == 1") is False
    assert ev("nosuch != 1") is False  # != is False too
    assert ev('nosuch != "x"') is False
    assert ev("1 != nosuch") is False
    assert ev("nosuch == nosuch") is False
    assert ev("nosuch + 1 > 0") is False
    assert ev("nosuch + 1 != 0") is False
    assert ev("-nosuch < 0") is False
    assert ev("nosuch") is False
    assert ev("!nosuch") is True  # undefined is false in boolean context
    assert ev("!(nosuch > 1)") is True
    assert ev("nosuch > 1 || ncpus > 1") is True
    assert ev("nosuch > 1 && ncpus > 1") is False


def test_defined():
    assert ev("defined(ncpus)") is True
    assert ev("defined(nosuch)") is False
    assert ev("defined(gpu_off)") is True  # defined even though false
    assert ev("defined(zero) && zero == 0") is True
    assert ev("!defined(example.com/fpga)") is True
    assert ev("defined(example.com/gpu)") is True


def test_booleans_and_zero():
    assert ev("linux") is True
    assert ev("!linux") is False
    assert ev("gpu_off") is False
    assert ev("!gpu_off") is True
    assert ev("linux == 1") is True
    assert ev("linux + 1 == 2") is True
    assert ev("zero") is False
    assert ev("0") is False
    assert ev("2") is True
    assert ev("!0") is True


def test_division_by_zero_is_undefined():
    assert ev("ncpus / 0 > 0") is False
    assert ev("ncpus / 0 != 0") is False
    assert ev("ncpus / zero < 1") is False


def test_results_are_bool():
    for text in ["ncpus", "ncpus + 1", "type", "nosuch", "ncpus > 1 && ut", "zero || ncpus", "defined(x)"]:
        assert type(ev(text)) is bool, text


def test_no_select_is_true():
    assert Primary(1).evaluate_select({}.get) is True
    assert parse_request("").primaries[0].evaluate_select(lambda name: 1 / 0) is True


def test_lookup_called_only_for_needed_names():
    seen = []

    def lookup(name):
        seen.append(name)
        return HOST.get(name)

    p = parse_request("select[ncpus > 100 && example.com/gpu > 1]").primaries[0]
    assert p.evaluate_select(lookup) is False
    assert seen == ["ncpus"]  # && short-circuits


def test_compile_predicate_is_cached_per_equal_tree():
    expr = Binary(">", Name("cache_probe_q"), Num(1))
    assert compile_predicate(expr) is compile_predicate(Binary(">", Name("cache_probe_q"), Num(1)))


def test_compile_value():
    assert compile_value(Binary("*", Name("a"), Num(3)))({"a": 2}.get) == 6
    assert compile_value(Unary("-", Name("a")))({"a": "s"}.get) is None
    assert compile_value(Str("x"))({}.get) == "x"
    assert compile_value(Binary(">", Name("a"), Num(1)))({"a": 2}.get) is True


def test_many_hosts_fast_path():
    p = parse_request("select[ncpus >= 8 && mem > 4000 && type == \"X86_64\"]").primaries[0]
    hosts = [{"ncpus": i % 32, "mem": (i % 10) * 1024**3, "type": "X86_64" if i % 3 else "ARM"} for i in range(3000)]
    chosen = [i for i, h in enumerate(hosts) if p.evaluate_select(h.get)]
    expected = [i for i in range(3000) if i % 32 >= 8 and (i % 10) * 1024 > 4000 and i % 3]
    assert chosen == expected
