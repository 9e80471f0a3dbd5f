"""ProviderManager: the naming table's examples, refusals, and unavailable-is-not-zero."""

import pickle

import pytest

from xce.providers import CpuMilliProvider, ProviderError, ProviderManager, ResourceProvider


class FakeProvider(ResourceProvider):
    """A third-party provider: its class lives outside xce.providers."""

    def __init__(self, name, capacity=1, available=True):
        self._name = name
        self._capacity = capacity
        self._available = available
        self.capacity_calls = 0

    @property
    def resource_name(self):
        return self._name

    def capacity(self):
        self.capacity_calls += 1
        if isinstance(self._capacity, Exception):
            raise self._capacity
        return self._capacity

    def is_available(self):
        return self._available


@pytest.mark.parametrize("name", ["example.com/cfd-cores", "octomy.io/gpu"])
def test_valid_names_from_the_table_register(name):
    m = ProviderManager()
    m.register(FakeProvider(name, 16))
    assert m.advertised() == {name: 16}


@pytest.mark.parametrize(
    "name, rule, phrase",
    [
        ("cfd-cores", "domain-prefix", 'breaks the rule "a domain prefix is required"'),
        ("octomy/gpu", "domain-dot", 'breaks the rule "the domain must contain a dot"'),
        ("xce.io/foo", "reserved-domain", 'uses the reserved domain "xce.io/"'),
    ],
)
def test_invalid_names_from_the_table_are_refused_at_registration(name, rule, phrase):
    m = ProviderManager()
    with pytest.raises(ProviderError) as info:
        m.register(FakeProvider(name, 4))
    err = info.value
    assert isinstance(err, ValueError)
    assert err.rule == rule
    assert err.resource_name == name
    assert f'resource name "{name}"' in str(err)
    assert phrase in str(err)
    assert "test_providers_manager.FakeProvider" in str(err)  # names who to fix
    assert m.names() == [] and m.advertised() == {}


def test_exact_messages_for_the_table():
    def message(name, capacity=1):
        with pytest.raises(ProviderError) as info:
            ProviderManager().register(FakeProvider(name, capacity))
        return str(info.value).split(" refused: ", 1)[1]

    assert message("cfd-cores") == (
        'resource name "cfd-cores" breaks the rule "a domain prefix is required" '
        "(expected DOMAIN/NAME, e.g. example.com/cfd-cores)"
    )
    assert message("octomy/gpu") == (
        'resource name "octomy/gpu" breaks the rule "the domain must contain a dot" (e.g. example.com/gpu)'
    )
    assert message("xce.io/foo") == (
        'resource name "xce.io/foo" uses the reserved domain "xce.io/" '
        "(only XCE's own providers may use it; choose your own domain)"
    )
    assert message("example.com/cfd-cores", 0.5) == (
        'quantity 0.5 for "example.com/cfd-cores" breaks the rule "quantities are whole numbers" '
        "(express fractions with a smaller unit, e.g. 500 of xce.io/cpu-milli, never 0.5)"
    )


def test_fractional_capacity_is_refused_with_the_whole_number_rule():
    m = ProviderManager()
    with pytest.raises(ProviderError) as info:
        m.register(FakeProvider("example.com/cfd-cores", 0.5))
    assert info.value.rule == "whole-number"
    assert '"example.com/cfd-cores"' in str(info.value)
    assert m.names() == []


def test_whole_number_capacities_are_accepted():
    m = ProviderManager()
    m.register(FakeProvider("example.com/a", 500))
    m.register(FakeProvider("example.com/b", 4.0))  # integral float loses nothing
    m.register(FakeProvider("example.com/c", 0))  # measured, and there are none
    adv = m.advertised()
    assert adv == {"example.com/a": 500, "example.com/b": 4, "example.com/c": 0}
    assert type(adv["example.com/b"]) is int


@pytest.mark.parametrize("capacity, rule", [(-1, "non-negative"), ("4", "number"), (True, "number")])
def test_bad_capacities_are_refused(capacity, rule):
    with pytest.raises(ProviderError) as info:
        ProviderManager().register(FakeProvider("example.com/x", capacity))
    assert info.value.rule == rule


def test_unavailable_hides_the_resource_rather_than_reporting_zero():
    m = ProviderManager()
    hidden = FakeProvider("example.com/su2-processes", RuntimeError("never asked"), available=False)
    m.register(hidden)
    m.register(FakeProvider("example.com/cfd-cores", 8))
    adv = m.advertised()
    assert "example.com/su2-processes" not in adv
    assert adv == {"example.com/cfd-cores": 8}
    assert hidden.capacity_calls == 0  # an unavailable provider need not invent a number
    assert m.names() == ["example.com/cfd-cores", "example.com/su2-processes"]


def test_is_available_must_be_a_real_bool():
    class CountNotBool(FakeProvider):
        def is_available(self):
            return 0

    with pytest.raises(ProviderError) as info:
        ProviderManager().register(CountNotBool("example.com/x", 3))
    assert info.value.rule == "interface"


def test_duplicate_names_are_refused():
    m = ProviderManager()
    first = FakeProvider("example.com/cfd-cores", 8)
    m.register(first)
    with pytest.raises(ProviderError) as info:
        m.register(FakeProvider("example.com/cfd-cores", 16))
    assert info.value.rule == "duplicate"
    assert '"example.com/cfd-cores"' in str(info.value)
    assert m.get("example.com/cfd-cores") is first
    assert m.advertised() == {"example.com/cfd-cores": 8}


def test_builtin_bare_names_are_refused_for_providers():
    with pytest.raises(ProviderError) as info:
        ProviderManager().register(FakeProvider("mem", 1))
    assert info.value.rule == "domain-prefix"
    assert "example.com/mem" in str(info.value)


def test_shipped_providers_may_use_the_reserved_domain():
    m = ProviderManager()
    m.register(CpuMilliProvider())
    assert "xce.io/cpu-milli" in m.advertised()


def test_a_subclass_of_a_shipped_provider_defined_elsewhere_is_not_shipped():
    class MyCpu(CpuMilliProvider):
        pass

    with pytest.raises(ProviderError) as info:
        ProviderManager().register(MyCpu())
    assert info.value.rule == "reserved-domain"


def test_duck_typed_providers_are_accepted_and_broken_ones_refused():
    class Duck:
        resource_name = "example.com/ducks"

        def capacity(self):
            return 3

        def is_available(self):
            return True

    class NoCapacity:
        resource_name = "example.com/x"

        def is_available(self):
            return True

    m = ProviderManager()
    m.register(Duck())
    assert m.advertised() == {"example.com/ducks": 3}
    with pytest.raises(ProviderError) as info:
        m.register(NoCapacity())
    assert info.value.rule == "interface"
    with pytest.raises(ProviderError) as info:
        m.register(FakeProvider(42))
    assert info.value.rule == "interface"


def test_a_measurement_that_raises_at_registration_is_refused():
    with pytest.raises(ProviderError) as info:
        ProviderManager().register(FakeProvider("example.com/x", OSError("probe failed")))
    assert info.value.rule == "measurement"
    assert "probe failed" in str(info.value)


def test_a_provider_that_goes_bad_later_raises_or_is_hidden_and_reported():
    m = ProviderManager()
    flaky = FakeProvider("example.com/flaky", 2)
    m.register(flaky)
    m.register(FakeProvider("example.com/steady", 5))
    flaky._capacity = 2.5
    with pytest.raises(ProviderError) as info:
        m.advertised()
    assert info.value.rule == "whole-number"
    errors = []
    assert m.advertised(errors=errors) == {"example.com/steady": 5}
    assert len(errors) == 1 and '"example.com/flaky"' in errors[0]


def test_provider_error_survives_pickling():
    with pytest.raises(ProviderError) as info:
        ProviderManager().register(FakeProvider("octomy/gpu"))
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.rule, copy.resource_name, str(copy)) == ("domain-dot", "octomy/gpu", str(info.value))


def test_the_abc_refuses_a_provider_without_a_name():
    class Nameless(ResourceProvider):
        def capacity(self):
            return 1

        def is_available(self):
            return True

    with pytest.raises(TypeError):
        Nameless()
