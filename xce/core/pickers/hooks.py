"""The contract of ``xce.core.pickers.base`` applied to one picker: checked when a configuration
names it (``xce.core.pickers.registry.make_picker``) and bound once where it is installed, so that a round calls
each optional hook through a slot that holds the bound method or None, and never asks the picker
what it has.

A hook with the wrong shape (not callable, or unable to take the contract's arguments) would
otherwise surface as a TypeError in the middle of some later round, far from its cause; checked
before anything changes it is one line naming the picker, the hook and the shape it needs.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from xce.core.pickers.base import CAPABILITIES, BasePicker, JobPicker
from xce.core.plugin_registry import PluginError


def methods(protocol: type) -> tuple[str, ...]:
    """The methods ``protocol`` declares, in declaration order."""
    return tuple(n for n, v in vars(protocol).items() if inspect.isfunction(v) and not n.startswith("_"))


def parameters(protocol: type, method: str) -> tuple[str, ...]:
    """The arguments the core passes to ``method`` (``self`` left out)."""
    return tuple(inspect.signature(vars(protocol)[method]).parameters)[1:]


def bound(picker: Any, method: str) -> Callable[..., Any] | None:
    """``picker``'s ``method`` ready to call, or None where it has no such capability (``BasePicker``'s
    no-ops stand for none)."""
    fn = getattr(picker, method, None)
    noop = vars(BasePicker).get(method)
    if fn is None or (noop is not None and getattr(fn, "__func__", None) is noop):
        return None
    return fn


def _shape_error(name: str, picker: Any, method: str, args: tuple[str, ...]) -> str | None:
    fn = getattr(picker, method, None)
    wanted = f"{method}({', '.join(args)})"
    if not callable(fn):
        return f"picker plugin {name!r}: {method} must be a method {wanted}"
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        return f"picker plugin {name!r}: {method}{inspect.signature(fn)} cannot be called as {wanted}"
    except ValueError:  # no signature to read (a builtin): trust it
        pass
    return None


def check(name: str, picker: Any) -> None:
    """Refuse ``picker`` (made under ``name``) unless it has every required hook and each optional
    one it defines has the shape the core calls it with."""
    if not isinstance(getattr(picker, "name", None), str):
        raise PluginError(f"picker plugin {name!r}: its class needs a str attribute name (the registered name)")
    for method in methods(JobPicker):
        if getattr(picker, method, None) is None:
            raise PluginError(f"picker plugin {name!r}: required hook {method}"
                              f"({', '.join(parameters(JobPicker, method))}) is missing")
        problem = _shape_error(name, picker, method, parameters(JobPicker, method))
        if problem:
            raise PluginError(problem)
    for capability in CAPABILITIES:
        declared = methods(capability)
        have = [m for m in declared if getattr(picker, m, None) is not None]
        if have and len(have) < len(declared):
            missing = next(m for m in declared if m not in have)
            raise PluginError(f"picker plugin {name!r}: {have[0]} without {missing}: "
                              f"{capability.__name__} needs {' and '.join(declared)}")
        for method in have:
            problem = _shape_error(name, picker, method, parameters(capability, method))
            if problem:
                raise PluginError(problem)


class PickerHooks:
    """A picker's optional hooks, each the bound method or None (see ``bound``)."""

    __slots__ = tuple(m for c in CAPABILITIES for m in methods(c))

    def __init__(self, picker: Any) -> None:
        for method in self.__slots__:
            setattr(self, method, bound(picker, method))
