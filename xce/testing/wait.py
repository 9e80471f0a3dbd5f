"""Polling until something holds, for tests of real processes: they change state in their own time."""

from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: Callable[[], str] | str = "condition",
             interval: float = 0.05) -> Any:
    """``check()``'s first truthy result; an AssertionError naming ``what`` (called late, so it can
    describe the state at the end) when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)
