"""Which resources the core knows and how each is charged.

Built-ins are XCE's own vocabulary; everything else is domain-prefixed and arrives with
RESOURCES_PUSH, with the configuration (shared pools) or with a host's advertised values
(a provider's capacity). A name in nobody's catalogue is not registered: usage reported for it
is ignored, and a request for it is refused as an unknown resource.
"""

from __future__ import annotations

from xce.core.specs import ResourceDef

BUILTIN_DEFS: tuple[ResourceDef, ...] = (
    ResourceDef("slots", consumable=True),
    ResourceDef("mem", consumable=True, dynamic=True, real=True),
    ResourceDef("maxmem"),
    ResourceDef("ncpus"),
    ResourceDef("swp", dynamic=True),
    ResourceDef("r15s", dynamic=True),
    ResourceDef("r1m", dynamic=True),
    ResourceDef("r15m", dynamic=True),
    ResourceDef("ut", dynamic=True),
    ResourceDef("type", numeric=False),
    ResourceDef("model", numeric=False),
    # The model of a host's GPUs (NVML's name, the fake provider's, or the configuration's).
    ResourceDef("gpu_model", numeric=False),
    # A cumulative counter: reported for accounting and pickers, never a capacity to charge.
    ResourceDef("cpu_time", dynamic=True),
)


class ResourceCatalog:
    """Resource definitions by name, in registration order (deterministic iteration)."""

    __slots__ = ("_defs", "version")

    def __init__(self) -> None:
        self._defs: dict[str, ResourceDef] = {d.name: d for d in BUILTIN_DEFS}
        #: Bumped whenever a definition is added or replaced: what is derived from them is kept until then.
        self.version = 0

    def register(self, rdef: ResourceDef) -> None:
        self._defs[rdef.name] = rdef
        self.version += 1

    def advertise(self, name: str) -> None:
        """A host advertised ``name`` without a definition: a provider's capacity, consumable and static."""
        if name not in self._defs and "/" in name:
            self._defs[name] = ResourceDef(name, consumable=True)
            self.version += 1

    def get(self, name: str) -> ResourceDef | None:
        return self._defs.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._defs

    def defs(self) -> list[ResourceDef]:
        return list(self._defs.values())

    def pushed(self) -> list[ResourceDef]:
        builtin = {d.name for d in BUILTIN_DEFS}
        return [d for d in self._defs.values() if d.name not in builtin]
