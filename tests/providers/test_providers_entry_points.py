"""Entry-point discovery, through a real (temporary) distribution on sys.path."""

import sys
import textwrap
import uuid

import pytest

from xce import plugins
from xce.core.pickers import registry as pickers_registry
from xce.core.preempt import registry as preempt_registry
from xce.providers import ProviderManager, default_manager


@pytest.fixture
def install(tmp_path, monkeypatch):
    """Install a throwaway distribution: ``install(entry_points_txt, modules)``.

    The registries are swapped for copies and the plugin modules dropped afterwards, so
    nothing a test registers leaks into another test.
    """
    monkeypatch.setattr(pickers_registry._registry, "_factories", dict(pickers_registry._registry._factories))
    monkeypatch.setattr(preempt_registry._registry, "_factories", dict(preempt_registry._registry._factories))
    added = []

    def _install(entry_points, modules):
        dist = f"xce_test_plugin_{uuid.uuid4().hex[:8]}"
        info = tmp_path / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
        for name, source in modules.items():
            (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
            added.append(name)
        monkeypatch.syspath_prepend(str(tmp_path))
        return dist

    yield _install
    for name in added:
        sys.modules.pop(name, None)


PICKER_MODULE = """
    from xce.core.pickers.base import BasePicker

    class TestPicker(BasePicker):
        name = "test_picker"

    class ImpostorFcfs(BasePicker):
        name = "builtin_fcfs"

    class TestPolicy:
        pass

    NOT_CALLABLE = 42
"""


def test_load_entry_points_registers_a_test_picker_and_policy(install):
    mod = f"xce_test_pickers_{uuid.uuid4().hex[:8]}"
    install(
        f"""
        [xce.pickers]
        test_picker = {mod}:TestPicker

        [xce.preempt_policies]
        test_policy = {mod}:TestPolicy
        """,
        {mod: PICKER_MODULE},
    )
    assert plugins.load_entry_points() == []
    assert "test_picker" in pickers_registry.available()
    assert type(pickers_registry.create("test_picker")).__name__ == "TestPicker"
    assert "builtin_fcfs" in pickers_registry.available()
    assert "test_policy" in preempt_registry.available()
    assert "lowest_priority_first" in preempt_registry.available()

    # idempotent: a second pass registers the same factories again without complaint
    before = dict(pickers_registry._registry._factories)
    assert plugins.load_entry_points() == []
    assert pickers_registry._registry._factories == before


def test_load_entry_points_reports_every_failure_naming_the_entry_point(install):
    mod = f"xce_test_pickers_{uuid.uuid4().hex[:8]}"
    dist = install(
        f"""
        [xce.pickers]
        builtin_fcfs = {mod}:ImpostorFcfs
        broken = no_such_module_{mod}:Picker
        missing_attr = {mod}:Nope
        not_callable = {mod}:NOT_CALLABLE
        good = {mod}:TestPicker

        [xce.preempt_policies]
        lowest_priority_first = {mod}:TestPolicy
        """,
        {mod: PICKER_MODULE},
    )
    errors = plugins.load_entry_points()
    assert len(errors) == 5, errors
    by_name = {e.split('"')[1].split(" = ")[0]: e for e in errors}
    assert set(by_name) == {"builtin_fcfs", "broken", "missing_attr", "not_callable", "lowest_priority_first"}
    for message in errors:
        assert f"(from {dist} 1.0)" in message

    assert by_name["builtin_fcfs"].startswith(f'xce.pickers entry point "builtin_fcfs = {mod}:ImpostorFcfs"')
    assert "picker plugin 'builtin_fcfs' is already registered" in by_name["builtin_fcfs"]
    assert "preempt policy 'lowest_priority_first' is already registered" in by_name["lowest_priority_first"]
    assert "failed to load: ModuleNotFoundError" in by_name["broken"]
    assert "failed to load: AttributeError" in by_name["missing_attr"]
    assert "does not name a class or factory" in by_name["not_callable"]

    # the builtin was not replaced, and the good plugin still got in
    assert type(pickers_registry.create("builtin_fcfs")).__name__ == "FcfsPicker"
    assert "good" in pickers_registry.available()
    assert plugins.load_entry_points() == errors  # same answer on every call


PROVIDER_MODULE = """
    from xce.providers.base import ResourceProvider

    class Su2ProcessProvider(ResourceProvider):
        resource_name = "example.com/su2-processes"

        def capacity(self):
            return 4

        def is_available(self):
            return True

    class NoSolverProvider(Su2ProcessProvider):
        resource_name = "example.com/su2-missing"

        def is_available(self):
            return False

    class SquatterProvider(Su2ProcessProvider):
        resource_name = "xce.io/foo"

    class HalfProvider(Su2ProcessProvider):
        resource_name = "example.com/half"

        def capacity(self):
            return 0.5

    class ExplodingProvider(Su2ProcessProvider):
        def __init__(self):
            raise RuntimeError("solver probe crashed")

    def make_cores():
        p = Su2ProcessProvider()
        p.resource_name = "example.com/cfd-cores"
        return p
"""


def test_default_manager_loads_third_party_providers_and_returns_refusals(install, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    mod = f"xce_test_providers_{uuid.uuid4().hex[:8]}"
    install(
        f"""
        [xce.resource_providers]
        su2 = {mod}:Su2ProcessProvider
        cores = {mod}:make_cores
        missing = {mod}:NoSolverProvider
        squatter = {mod}:SquatterProvider
        half = {mod}:HalfProvider
        exploding = {mod}:ExplodingProvider
        gone = no_such_module_{mod}:P
        again = {mod}:Su2ProcessProvider
        cpu = xce.providers.cpu:CpuMilliProvider
        """,
        {mod: PROVIDER_MODULE},
    )
    manager, errors = default_manager()
    adv = manager.advertised()
    assert adv["example.com/su2-processes"] == 4
    assert adv["example.com/cfd-cores"] == 4
    assert "example.com/su2-missing" not in adv  # registered, but unavailable hides it
    assert "example.com/su2-missing" in manager.names()
    assert "xce.io/foo" not in manager.names()
    assert {"xce.io/cpu-milli", "xce.io/memory-bytes"} <= set(adv)

    by_name = {e.split('"')[1].split(" = ")[0]: e for e in errors}
    # "again" and "su2" name the same provider: whichever sorts second is the duplicate
    assert set(by_name) == {"squatter", "half", "exploding", "gone", "su2", "cpu"}, errors
    assert 'uses the reserved domain "xce.io/"' in by_name["squatter"]
    assert '"xce.io/foo"' in by_name["squatter"]
    assert 'breaks the rule "quantities are whole numbers"' in by_name["half"]
    assert "solver probe crashed" in by_name["exploding"]
    assert "failed to load: ModuleNotFoundError" in by_name["gone"]
    assert "is already advertised by" in by_name["su2"]
    assert 'resource name "xce.io/cpu-milli" is already advertised' in by_name["cpu"]
    assert all(e.startswith("xce.resource_providers entry point ") for e in errors)


def test_default_manager_without_entry_points_ignores_installed_plugins(install):
    mod = f"xce_test_providers_{uuid.uuid4().hex[:8]}"
    install(f"[xce.resource_providers]\nsquatter = {mod}:SquatterProvider\n", {mod: PROVIDER_MODULE})
    manager, errors = default_manager(load_entry_points=False)
    assert errors == []
    assert "xce.io/foo" not in manager.names()
    assert ProviderManager().register_entry_points() != []
