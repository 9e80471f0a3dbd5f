"""Picker plugins by name: the builtins plus whatever a driver registers from the ``xce.pickers``
entry points (discovery reads package metadata, which is I/O, so it lives in ``xce.plugins``).

An unknown name is a configuration error that lists what is registered: never a silent fallback.
"""

from __future__ import annotations

from typing import Callable

from xce.core.pickers.base import JobPicker

_REGISTRY: dict[str, Callable[[], JobPicker]] = {}


class PluginError(ValueError):
    """A configured plugin name nobody registered, or a name registered twice."""


def register(name: str, factory: Callable[[], JobPicker], *, replace: bool = False) -> None:
    if name in _REGISTRY and not replace and _REGISTRY[name] is not factory:
        raise PluginError(f"picker plugin {name!r} is already registered")
    _REGISTRY[name] = factory


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def available() -> list[str]:
    _ensure_builtins()
    return sorted(_REGISTRY)


def create(name: str) -> JobPicker:
    _ensure_builtins()
    factory = _REGISTRY.get(name)
    if factory is None:
        raise PluginError(
            f"job_pick_plugin {name!r} is not registered (registered: {', '.join(sorted(_REGISTRY))})")
    return factory()


def _ensure_builtins() -> None:
    if "builtin_fcfs" not in _REGISTRY:
        from xce.core.pickers.fcfs import FcfsPicker

        _REGISTRY["builtin_fcfs"] = FcfsPicker
