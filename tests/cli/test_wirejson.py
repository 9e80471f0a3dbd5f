"""The CLI's JSON (xce.wirejson) against the standard library's: same values both ways, same errors."""

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from xce import wirejson

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
                      max_leaves=30)


@given(values)
def test_what_it_writes_reads_back_the_same_everywhere(value):
    text = wirejson.dumps(value)
    assert text.isascii()
    assert json.loads(text) == value
    assert wirejson.loads(text) == value
    assert wirejson.loads(text.encode()) == value


@given(values)
def test_it_reads_what_the_controller_writes(value):
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False) + "\n"):
        assert wirejson.loads(text) == value
        assert wirejson.loads(text.encode("utf-8")) == value


def test_non_finite_numbers_as_json_writes_them():
    assert wirejson.loads("[NaN, Infinity, -Infinity]")[1:] == [math.inf, -math.inf]
    assert math.isnan(wirejson.loads("NaN"))


@pytest.mark.parametrize("bad", ["", "   ", "{", '{"a" 1}', "1 2", "[1,]", '"\x01"', "nul", '{"a": 1}}'])
def test_malformed_input_fails_as_json_fails(bad):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(bad)
    with pytest.raises(json.JSONDecodeError) as got:
        wirejson.loads(bad)
    assert str(got.value) == str(expected.value)


def test_what_json_cannot_hold_is_refused():
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        wirejson.dumps({"a": {1}})
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        wirejson.dumps(loop)


def test_it_imports_neither_json_nor_re():
    code = ("import sys\nfrom xce import wirejson\nwirejson.loads(wirejson.dumps({'a': [1.5, None]}))\n"
            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
