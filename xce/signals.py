"""Signals as people name them: ``USR2``, ``SIGUSR2`` or ``12``, as ``kill``, bkill and scancel take them.

Standard library only: the CLI, the controller and the worker all read signal names.
"""

from __future__ import annotations

import signal


def parse_signal(text: str) -> signal.Signals | None:
    """The signal ``text`` names, or None for no such signal."""
    t = text.strip().upper()
    try:
        return signal.Signals(int(t)) if t.isdigit() else signal.Signals[t if t.startswith("SIG") else "SIG" + t]
    except (KeyError, ValueError):
        return None
