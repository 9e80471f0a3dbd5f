"""The pure scheduling core: ``from xce.core import SchedulerCore, events, decisions``.

Nothing under ``xce.core`` does I/O or reads the wall clock except ``clock.VirtualClock``'s
monotonic read; ``tests/core/test_purity.py`` enforces it.

The names are loaded on first use (PEP 562), so that a stdlib-only leaf such as
:mod:`xce.core.quantity` can be imported by the CLI's fast path without numpy and the engine.
"""

from __future__ import annotations

__all__ = ["SchedulerCore", "decisions", "events", "specs"]


def __getattr__(name: str):
    if name == "SchedulerCore":
        from xce.core.core import SchedulerCore

        return SchedulerCore
    if name == "decisions":
        import xce.core.decisions as module
    elif name == "events":
        import xce.core.events as module
    elif name == "specs":
        import xce.core.specs as module
    else:
        raise AttributeError(f"module 'xce.core' has no attribute {name!r}")
    return module
