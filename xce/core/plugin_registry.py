"""Plugins by name: the builtins, plus what a driver registers from entry points (discovery reads
package metadata, which is I/O, so it lives in ``xce.plugins``, outside the core).

A name registered twice is refused, and an unknown name is a configuration error that lists what
is registered: never a silent fallback (Req 1 AC 6, Req 5 AC 5).
"""

from __future__ import annotations

from typing import Any, Callable


class PluginError(ValueError):
    """A configured plugin name nobody registered, or a name registered twice."""


class Registry:
    def __init__(self, kind: str, setting: str, builtins: dict[str, Callable[[], Any]]) -> None:
        #: e.g. "picker plugin" (for duplicates) and "job_pick_plugin" (the setting that names it).
        self.kind = kind
        self.setting = setting
        self._builtins = frozenset(builtins)
        self._factories: dict[str, Callable[[], Any]] = dict(builtins)

    def register(self, name: str, factory: Callable[[], Any], *, replace: bool = False) -> None:
        if name in self._factories and not replace and self._factories[name] is not factory:
            raise PluginError(f"{self.kind} {name!r} is already registered")
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        if name not in self._builtins:
            self._factories.pop(name, None)

    def available(self) -> list[str]:
        return sorted(self._factories)

    def create(self, name: str) -> Any:
        factory = self._factories.get(name)
        if factory is None:
            raise PluginError(f"{self.setting} {name!r} is not registered "
                              f"(registered: {', '.join(sorted(self._factories))})")
        return factory()
