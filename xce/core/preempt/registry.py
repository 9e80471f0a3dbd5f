"""Victim selection policies by name (entry point group ``xce.preempt_policies``, discovered by
``xce.plugins``); an unknown name is a configuration error."""

from __future__ import annotations

from typing import Any, Callable

from xce.core.pickers.registry import PluginError

_REGISTRY: dict[str, Callable[[], Any]] = {}


def register(name: str, factory: Callable[[], Any], *, replace: bool = False) -> None:
    if name in _REGISTRY and not replace and _REGISTRY[name] is not factory:
        raise PluginError(f"preempt policy {name!r} is already registered")
    _REGISTRY[name] = factory


def available() -> list[str]:
    _ensure_builtins()
    return sorted(_REGISTRY)


def create(name: str) -> Any:
    _ensure_builtins()
    factory = _REGISTRY.get(name)
    if factory is None:
        raise PluginError(
            f"preempt_policy {name!r} is not registered (registered: {', '.join(sorted(_REGISTRY))})")
    return factory()


def _ensure_builtins() -> None:
    if "lowest_priority_first" not in _REGISTRY:
        from xce.core.preempt.lowest_priority_first import LowestPriorityFirst

        _REGISTRY["lowest_priority_first"] = LowestPriorityFirst
