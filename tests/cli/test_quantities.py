"""One grammar for quantities: the same text means the same amount, or fails with the same words,
on the command line, in the API, in the configuration and in the resource requirement language."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from xce.cli.submit import parse_pairs
from xce.config.schema import SharedResourceConfig
from xce.controller.jobs.submission import _quantities
from xce.core.quantity import QUANTITY_EXPECTED, QuantityError, format_quantity, human_quantity, parse_quantity
from xce.core.resources.naming import MEMORY_RESOURCES
from xce.core.resreq import RequestSyntaxError, parse_request
from xce.sim.cluster_file import parse_size
from xce.testing.builders import to_bytes

G = 1024**3


@pytest.mark.parametrize("text", ["2G", "2g", "2GB", "2gb", "2GiB", "2gib", "2048M", "2048", "2097152K", " 2G "])
def test_2g_is_2gib_in_every_spelling(text):
    assert parse_quantity("mem", text) == 2 * G


def test_units_are_powers_of_1024_and_bare_memory_is_mib():
    assert parse_quantity("mem", "1P") == 1024**5
    assert parse_quantity("example.com/gpu", "2") == 2
    assert parse_quantity("example.com/lic", "1K") == 1024
    assert parse_quantity("mem", "0.5G") == 512 * 1024**2


@pytest.mark.parametrize("name, text, expected", [
    ("mem", "2X", QUANTITY_EXPECTED),
    ("mem", "", QUANTITY_EXPECTED),
    ("mem", "1e9", QUANTITY_EXPECTED),
    ("mem", "-1G", "a non-negative quantity"),
    ("mem", "0.1M", "a whole number of bytes"),
    ("example.com/gpu", "0.5", "a whole number"),
    ("mem", "99999999999P", "a smaller number"),
])
def test_errors_name_the_text_and_what_was_expected(name, text, expected):
    with pytest.raises(QuantityError) as info:
        parse_quantity(name, text)
    assert str(info.value) == f'quantity "{text}" for "{name}": expected {expected}'


def test_the_exact_formatter_reads_back():
    for amount in (0, 1, 1023, 1024, 1536, 3 * 1024**5, 12345678901):
        assert parse_quantity("mem", format_quantity("mem", amount)) == amount
        assert parse_quantity("example.com/gpu", format_quantity("example.com/gpu", amount)) == amount
    assert format_quantity("mem", 4 * G) == "4G"
    assert human_quantity("mem", 1536 * 1024**2) == "1.5G" and human_quantity("mem", 512) == "512B"


# -- the surfaces -------------------------------------------------------------------------------------------


def _cli(name: str, text: str):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return ("ok", parse_pairs("--request", [f"{name}={text}"])[name])
    except SystemExit:
        return ("err", err.getvalue())


def _api(name: str, text: str):
    errors: list = []
    out = _quantities("requests", {name: text}, errors)
    return ("ok", out[name]) if not errors else ("err", errors[0]["msg"])


def _config(name: str, text: str):
    from pydantic import ValidationError

    try:
        return ("ok", SharedResourceConfig(total=text).total)
    except ValidationError as exc:
        return ("err", str(exc))


def _resreq(name: str, text: str):
    try:
        return ("ok", parse_request(f"rusage[{name}={text}]").primaries[0].rusage[0][1])
    except RequestSyntaxError as exc:
        return ("err", exc.expected)


def _agree(name: str, text: str) -> None:
    grammar: tuple
    try:
        grammar = ("ok", parse_quantity(name, text))
    except QuantityError as exc:
        grammar = ("err", str(exc).partition(": expected ")[2])
    rr = _resreq(name, text)
    surfaces = {"cli": _cli(name, text), "api": _api(name, text)}
    if name not in MEMORY_RESOURCES:  # shared pools are counts, never memory
        surfaces["config"] = _config(name, text)
    if grammar[0] == "ok":
        assert rr == grammar, (text, rr, grammar)
        for surface, got in surfaces.items():
            assert got == grammar, (surface, text, got, grammar)
        if name == "mem" and grammar[1] > 0:
            assert parse_size(text) == to_bytes(text) == grammar[1]
    else:
        assert rr[0] == "err" and rr[1] == grammar[1], (text, rr, grammar)
        for surface, got in surfaces.items():
            assert got[0] == "err", (surface, text, got)
            # the configuration's pool has no resource name to quote; every other surface names it
            quoted = f'quantity "{text.strip()}"' + ("" if surface == "config" else f' for "{name}"')
            assert f"{quoted}: expected {rr[1]}" in got[1], (surface, text, got)
        if name == "mem":
            for surface in (parse_size, to_bytes):
                with pytest.raises(ValueError, match="expected " + rr[1].replace("(", r"\(").replace(")", r"\)")):
                    surface(text)


_UNIT = st.sampled_from(["", "K", "M", "G", "T", "P", "k", "m", "g", "t", "p"])
_SUFFIX = st.sampled_from(["", "", "B", "b", "iB", "ib", "X", "BB"])
_NUMBER = st.builds(lambda i, f: i + (("." + f) if f is not None else ""),
                    st.from_regex(r"[0-9]{1,20}", fullmatch=True),
                    st.none() | st.from_regex(r"[0-9]{0,6}", fullmatch=True))
_STRUCTURED = st.builds(lambda sign, n, u, s: sign + n + u + (s if u else s.replace("i", "")),
                        st.sampled_from(["", "", "", "-"]), _NUMBER, _UNIT, _SUFFIX)
_JUNK = st.text(alphabet="0123456789.KMGTPkmgtpBbiX-+e", max_size=8)
_TEXT = st.builds(lambda pad1, t, pad2: pad1 + t + pad2, st.sampled_from(["", " "]), _STRUCTURED | _JUNK,
                  st.sampled_from(["", " "]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["mem", "example.com/gpu", "swp"]), text=_TEXT)
def test_every_surface_reads_a_quantity_the_same_way(name, text):
    _agree(name, text)


@pytest.mark.parametrize("text", ["2G", "2gb", "2048", "0.5G", "1.5", "-1", "4X", "", "1-2", "1P", "0.1M"])
def test_every_surface_agrees_on_examples(text):
    for name in ("mem", "example.com/gpu"):
        _agree(name, text)
