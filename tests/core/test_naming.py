import pickle

import pytest

from xce.core.resources.naming import (
    BUILTIN_RESOURCES,
    MEMORY_RESOURCES,
    RESERVED_DOMAIN,
    QuantityError,
    ResourceNameError,
    validate_quantity,
    validate_resource_name,
)


def test_constants():
    assert BUILTIN_RESOURCES == frozenset(
        {"slots", "mem", "maxmem", "ncpus", "swp", "r15s", "r1m", "r15m", "ut", "type", "model", "gpu_model", "cpu_time"}
    )
    assert MEMORY_RESOURCES == frozenset({"mem", "maxmem", "swp"})
    assert MEMORY_RESOURCES <= BUILTIN_RESOURCES
    assert RESERVED_DOMAIN == "xce.io"


@pytest.mark.parametrize("name", sorted(BUILTIN_RESOURCES))
def test_builtins_are_valid_without_prefix(name):
    assert validate_resource_name(name) is None


@pytest.mark.parametrize(
    "name",
    ["example.com/cfd-cores", "example.com/gpu", "a.b/c", "my-site.example.org/gpu.a100_80g", "3com.com/x"],
)
def test_valid_names(name):
    assert validate_resource_name(name) is None


def test_reserved_domain_allowed_for_own_providers():
    assert validate_resource_name("xce.io/gpu", allow_reserved=True) is None
    assert validate_resource_name("xce.io/cpu-milli", allow_reserved=True) is None


def test_domain_prefix_required():
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("cfd-cores")
    assert str(info.value) == (
        'resource name "cfd-cores" breaks the rule "a domain prefix is required" '
        "(expected DOMAIN/NAME, e.g. example.com/cfd-cores)"
    )
    assert info.value.rule == "domain-prefix"
    assert info.value.name == "cfd-cores"


def test_domain_must_contain_dot():
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("octomy/gpu")
    assert str(info.value) == (
        'resource name "octomy/gpu" breaks the rule "the domain must contain a dot" (e.g. example.com/gpu)'
    )
    assert info.value.rule == "domain-dot"


def test_reserved_domain_refused():
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("xce.io/foo")
    assert str(info.value) == (
        'resource name "xce.io/foo" uses the reserved domain "xce.io/" '
        "(only XCE's own providers may use it; choose your own domain)"
    )
    assert info.value.rule == "reserved-domain"
    # DNS is case-insensitive: the reservation cannot be dodged with capitals.
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("XCE.IO/foo")
    assert info.value.rule == "reserved-domain"


@pytest.mark.parametrize(
    "name",
    ["example.com/", "example.com/-gpu", "example.com/gpu-", "example.com/g pu", "example.com/a/b", "-x.com/gpu",
     "x..com/gpu", "x.com./gpu", "exa_mple.com/gpu", ".com/gpu"],
)
def test_malformed(name):
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name(name)
    assert info.value.rule == "malformed"
    assert str(info.value).startswith(f'resource name "{name}" is malformed: ')


def test_rule_order_prefix_before_malformed():
    # Several rules broken: the most basic one is reported.
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("bad name!")
    assert info.value.rule == "domain-prefix"
    assert str(info.value).endswith("(expected DOMAIN/NAME, e.g. example.com/gpu)")
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("xce/-")
    assert info.value.rule == "domain-dot"
    # malformed is checked before reserved
    with pytest.raises(ResourceNameError) as info:
        validate_resource_name("xce.io/-x")
    assert info.value.rule == "malformed"


def test_error_is_value_error_and_pickles():
    with pytest.raises(ValueError):
        validate_resource_name("gpu")
    try:
        validate_resource_name("gpu")
    except ResourceNameError as exc:
        clone = pickle.loads(pickle.dumps(exc))
        assert (clone.name, clone.rule, str(clone)) == (exc.name, exc.rule, str(exc))


@pytest.mark.parametrize("value, expected", [(0, 0), (4, 4), (4.0, 4), (10**20, 10**20), (0.0, 0)])
def test_quantity_whole(value, expected):
    result = validate_quantity("example.com/gpu", value)
    assert result == expected
    assert type(result) is int


def test_quantity_fraction():
    with pytest.raises(QuantityError) as info:
        validate_quantity("example.com/gpu", 0.5)
    assert str(info.value) == (
        'quantity 0.5 for "example.com/gpu" breaks the rule "quantities are whole numbers" '
        "(express fractions with a smaller unit, e.g. 500 of xce.io/cpu-milli, never 0.5)"
    )
    assert info.value.rule == "whole-number"
    assert isinstance(info.value, ValueError)


def test_quantity_negative():
    with pytest.raises(QuantityError) as info:
        validate_quantity("x", -1)
    assert str(info.value) == 'quantity -1 for "x" must not be negative'
    assert info.value.rule == "non-negative"
    with pytest.raises(QuantityError) as info:
        validate_quantity("x", -2.0)
    assert str(info.value) == 'quantity -2 for "x" must not be negative'


@pytest.mark.parametrize("value", [True, False, "4", None, float("inf"), float("nan")])
def test_quantity_rejects_non_numbers(value):
    with pytest.raises(QuantityError):
        validate_quantity("example.com/gpu", value)
