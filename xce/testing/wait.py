"""Polling until something holds, for tests of real processes: they change state in their own time,
and on a loaded machine that time stretches (:class:`xce.client.patience.Patience`)."""

from __future__ import annotations

import time
from typing import Any, Callable

from xce.client.patience import Patience


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: Callable[[], str] | str = "condition",
             interval: float = 0.05) -> Any:
    """``check()``'s first truthy result; an AssertionError naming ``what`` (called late, so it can
    describe the state at the end) when ``timeout`` seconds of the machine's time pass first."""
    patience = Patience(timeout)
    while True:
        result = check()
        if result:
            return result
        if patience.expired():
            raise AssertionError(f"timed out after {patience.describe()} waiting for "
                                 f"{what() if callable(what) else what}")
        time.sleep(interval)
