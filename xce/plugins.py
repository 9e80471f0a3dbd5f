"""Discovery of third-party plugins through package entry points.

The core registries (``xce.core.pickers.registry``, ``xce.core.preempt.registry``) stay free
of I/O so the core remains pure and replayable; reading installed package metadata happens
here, once, at the edge, and the result is pushed into them.

Nothing that fails here is swallowed.  A plugin that cannot be imported, or that takes a
name already registered, comes back as a message naming the entry point and its
distribution, because the person who has to act is the one who installed the package, and
"unknown picker" at configuration time would send them looking in the wrong place.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any, Callable, Iterable

__all__ = [
    "HOOKS_GROUP",
    "PICKERS_GROUP",
    "PREEMPT_POLICIES_GROUP",
    "RESOURCE_PROVIDERS_GROUP",
    "describe_entry_point",
    "entry_points_of",
    "load_entry_points",
]

PICKERS_GROUP = "xce.pickers"
PREEMPT_POLICIES_GROUP = "xce.preempt_policies"
RESOURCE_PROVIDERS_GROUP = "xce.resource_providers"
HOOKS_GROUP = "xce.hooks"  # site hooks on job events, run by the controller (``xce.hooks``)


def entry_points_of(group: str) -> list[importlib.metadata.EntryPoint]:
    """The group's entry points in a stable order.

    Sorted by name and value so which of two clashing plugins wins (and which one is
    reported) does not depend on directory listing order.
    """
    found = importlib.metadata.entry_points(group=group)
    return sorted(found, key=lambda ep: (ep.name, ep.value, _dist_label(ep)))


def _dist_label(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ""
    try:
        return f"{dist.name} {dist.version}"
    except Exception:  # broken metadata must not hide the entry point's own problem
        return "?"


def describe_entry_point(ep: importlib.metadata.EntryPoint) -> str:
    """How an entry point is named in error messages: group, the line as written, and the
    distribution, which is what somebody would uninstall or fix."""
    text = f'{ep.group} entry point "{ep.name} = {ep.value}"'
    dist = _dist_label(ep)
    return f"{text} (from {dist})" if dist else text


def _load_group(group: str, register: Callable[[str, Any], None], errors: list[str]) -> None:
    for ep in entry_points_of(group):
        where = describe_entry_point(ep)
        try:
            factory = ep.load()
        except Exception as exc:  # any import-time failure of someone else's code
            errors.append(f"{where} failed to load: {type(exc).__name__}: {exc}")
            continue
        if not callable(factory):
            errors.append(f"{where} does not name a class or factory (got {type(factory).__name__})")
            continue
        try:
            register(ep.name, factory)
        except ValueError as exc:
            errors.append(f"{where} refused: {exc}")


def _registries() -> Iterable[tuple[str, Any]]:
    from xce import hooks
    from xce.core.pickers import registry as pickers
    from xce.core.preempt import registry as preempt

    return ((PICKERS_GROUP, pickers), (PREEMPT_POLICIES_GROUP, preempt), (HOOKS_GROUP, hooks))


def load_entry_points() -> list[str]:
    """Register every installed picker, preemption policy and hook; return what went wrong.

    Safe to call more than once: a factory already registered under the same name is the
    same object on a second pass, which the registries accept, so a repeat call changes
    nothing and returns the same messages.  Each call rereads the metadata, so a package
    installed since the last call is picked up.

    The builtins are in their registries from the start, so a plugin named ``builtin_fcfs``
    is refused and reported, never silently standing in for the builtin.
    """
    errors: list[str] = []
    for group, registry in _registries():
        _load_group(group, registry.register, errors)
    return errors
