"""The one place a worker's advertised resources are decided.

Every name and every number is checked when the provider registers, not when a job is
placed: at registration the error reaches the person who chose the name or wrote the
measurement while they are still working on it; at placement it reaches a user whose job
pends for a reason they cannot fix.

The reserved ``xce.io/`` domain is granted by where a provider's class is defined, not by
what it says about itself, so a site's provider cannot start publishing under XCE's name,
nor shadow a resource XCE ships later.
"""

from __future__ import annotations

from typing import Any, Iterator

from xce.core.resources.naming import (
    BUILTIN_RESOURCES,
    QuantityError,
    ResourceNameError,
    validate_quantity,
    validate_resource_name,
)
from xce.plugins import RESOURCE_PROVIDERS_GROUP, describe_entry_point, entry_points_of
from xce.providers.base import ResourceProvider

__all__ = ["ProviderError", "ProviderManager", "default_manager"]

_SHIPPED_PACKAGE = "xce.providers"


class ProviderError(ValueError):
    """A provider refused at registration, or one whose measurement failed later.

    ``rule`` is the naming rule's id (``domain-prefix``, ``domain-dot``, ``malformed``,
    ``reserved-domain``), the quantity rule's id (``number``, ``whole-number``,
    ``non-negative``), or one of ``duplicate``, ``interface``, ``measurement``; callers that
    react to the kind of mistake read it instead of parsing the wording.
    """

    def __init__(self, resource_name: str | None, rule: str, message: str, provider: str = "") -> None:
        super().__init__(message)
        self.resource_name = resource_name
        self.rule = rule
        self.provider = provider

    def __reduce__(self):  # registration errors travel from worker to controller
        return (type(self), (self.resource_name, self.rule, str(self), self.provider))


def _label(provider: Any) -> str:
    cls = type(provider)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_shipped(provider: Any) -> bool:
    module = type(provider).__module__ or ""
    return module == _SHIPPED_PACKAGE or module.startswith(_SHIPPED_PACKAGE + ".")


class ProviderManager:
    def __init__(self) -> None:
        self._providers: dict[str, Any] = {}

    # --- registration -------------------------------------------------------------------

    def register(self, provider: ResourceProvider) -> None:
        """Accept ``provider`` or raise :class:`ProviderError`; nothing is kept on refusal.

        Duck-typed providers are accepted: the ABC documents the contract, but a plugin
        should not have to import XCE just to be measured.
        """
        who = _label(provider)
        name = self._checked_name(provider, who)
        if name in self._providers:
            raise ProviderError(
                name,
                "duplicate",
                f'resource provider {who} refused: resource name "{name}" is already advertised by '
                f"{_label(self._providers[name])} (one provider per resource, so two measurements "
                f"can never disagree about one number)",
                who,
            )
        # Measured now so that a fractional or negative figure is reported at start-up by
        # the worker that owns it, not discovered in the middle of a scheduling round.
        self._measure(provider, name, who)
        self._providers[name] = provider

    def _checked_name(self, provider: Any, who: str) -> str:
        for attr in ("capacity", "is_available"):
            if not callable(getattr(provider, attr, None)):
                raise ProviderError(
                    None, "interface", f"resource provider {who} refused: it has no {attr}() method", who
                )
        try:
            name = provider.resource_name
        except Exception as exc:
            raise ProviderError(
                None, "interface", f"resource provider {who} refused: reading resource_name failed: {exc!r}", who
            ) from exc
        if not isinstance(name, str):
            raise ProviderError(
                None,
                "interface",
                f"resource provider {who} refused: resource_name must be a string, got {name!r}",
                who,
            )
        if name in BUILTIN_RESOURCES:
            # The naming check lets these bare names through because jobs may request them,
            # but the worker measures them itself; a provider publishing "mem" would be a
            # second, competing account of the same thing.
            raise ProviderError(
                name,
                "domain-prefix",
                f'resource provider {who} refused: resource name "{name}" breaks the rule "a domain '
                f'prefix is required" ("{name}" is a built-in resource the worker measures itself; '
                f"a provider advertises DOMAIN/NAME, e.g. example.com/{name})",
                who,
            )
        try:
            validate_resource_name(name, allow_reserved=_is_shipped(provider))
        except ResourceNameError as exc:
            raise ProviderError(name, exc.rule, f"resource provider {who} refused: {exc}", who) from exc
        return name

    def _measure(self, provider: Any, name: str, who: str) -> int | None:
        """The validated capacity, or None when the provider says it cannot measure."""
        try:
            available = provider.is_available()
        except Exception as exc:
            raise ProviderError(
                name, "measurement", f'resource provider {who} failed: is_available() for "{name}" raised {exc!r}', who
            ) from exc
        if not isinstance(available, bool):
            # 0 and False are exactly the two answers this API keeps apart; a provider that
            # returns a count here has confused them.
            raise ProviderError(
                name,
                "interface",
                f'resource provider {who} refused: is_available() for "{name}" must return True or '
                f"False, got {available!r}",
                who,
            )
        if not available:
            return None
        try:
            raw = provider.capacity()
        except Exception as exc:
            raise ProviderError(
                name, "measurement", f'resource provider {who} failed: capacity() for "{name}" raised {exc!r}', who
            ) from exc
        try:
            return validate_quantity(name, raw)
        except QuantityError as exc:
            raise ProviderError(name, exc.rule, f"resource provider {who} refused: {exc}", who) from exc

    def register_entry_points(self, group: str = RESOURCE_PROVIDERS_GROUP) -> list[str]:
        """Register every installed third-party provider; return one message per refusal.

        Refusals are returned, not raised, because one site's broken plugin must not keep a
        worker from advertising its CPUs; the worker prints them and sends them back as
        registration errors so they are seen centrally.
        """
        errors: list[str] = []
        for ep in entry_points_of(group):
            where = describe_entry_point(ep)
            try:
                factory = ep.load()
            except Exception as exc:
                errors.append(f"{where} failed to load: {type(exc).__name__}: {exc}")
                continue
            if not callable(factory):
                errors.append(f"{where} does not name a provider class or factory (got {type(factory).__name__})")
                continue
            try:
                provider = factory()
            except Exception as exc:
                errors.append(f"{where} failed to construct its provider: {type(exc).__name__}: {exc}")
                continue
            try:
                self.register(provider)
            except ProviderError as exc:
                errors.append(f"{where}: {exc}")
        return errors

    # --- what the node advertises ---------------------------------------------------------

    def advertised(self, *, errors: list[str] | None = None) -> dict[str, int]:
        """Name → capacity for every provider that can measure now, sorted by name.

        An unavailable provider is absent, never 0.  A provider whose answer has gone bad
        since it registered raises :class:`ProviderError`, unless the caller passes an
        ``errors`` list: then the resource is hidden (it could not be measured, which is what
        unavailable means) and the message is appended, so a long-running worker can keep
        advertising everything else without the failure going unseen.
        """
        result: dict[str, int] = {}
        for name in sorted(self._providers):
            provider = self._providers[name]
            try:
                value = self._measure(provider, name, _label(provider))
            except ProviderError as exc:
                if errors is None:
                    raise
                errors.append(str(exc))
                continue
            if value is not None:
                result[name] = value
        return result

    def get(self, name: str) -> Any | None:
        """The provider behind ``name``, e.g. to ask the GPU provider for device indexes."""
        return self._providers.get(name)

    def names(self) -> list[str]:
        """Every registered name, available or not; ``advertised()`` is what the node offers."""
        return sorted(self._providers)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._providers[name] for name in sorted(self._providers))

    def __len__(self) -> int:
        return len(self._providers)


def default_manager(load_entry_points: bool = True,
                    fake_gpus: tuple[str, int] | None = None) -> tuple[ProviderManager, list[str]]:
    """A manager with the three shipped providers, then the installed third-party ones.

    Returns ``(manager, errors)``.  A shipped provider that is refused raises, because that
    is a bug in XCE, not in a site's plugin; a third-party refusal lands in ``errors``.
    ``load_entry_points=False`` is for tests and for tools that must not import site code.
    ``fake_gpus`` (model, count) puts the fake GPU provider in NVML's place.
    """
    from xce.providers.cpu import CpuMilliProvider
    from xce.providers.gpu import FakeGpuProvider, GpuProvider
    from xce.providers.memory import MemoryBytesProvider

    manager = ProviderManager()
    gpu = GpuProvider() if fake_gpus is None else FakeGpuProvider(*fake_gpus)
    for provider in (CpuMilliProvider(), MemoryBytesProvider(), gpu):
        manager.register(provider)
    errors = manager.register_entry_points() if load_entry_points else []
    return manager, errors
