"""The pure scheduling core: ``from xce.core import SchedulerCore, events, decisions``.

Nothing under ``xce.core`` does I/O or reads the wall clock except ``clock.VirtualClock``'s
monotonic read; ``tests/core/test_purity.py`` enforces it.
"""

from xce.core import decisions, events, specs
from xce.core.core import SchedulerCore

__all__ = ["SchedulerCore", "decisions", "events", "specs"]
