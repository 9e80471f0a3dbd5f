"""What every workflow script reports: the steps it got through, in order, and the first that failed.

Imported by the scripts, which run in the tool's own environment (not XCE's), so it uses the
standard library only. The battery reads the last line printed: ``{"ok", "steps", "why"}``."""

from __future__ import annotations

import json
import sys
import time
import traceback


class Steps:
    def __init__(self) -> None:
        self.steps: dict[str, str] = {}
        self.why = ""

    def check(self, name: str, cond: bool, detail: str = "") -> None:
        """A step's outcome; a failed one stops the workflow (the steps after it depend on it)."""
        self.steps[name] = "ok" if cond else "failed"
        if not cond:
            raise StepFailed(f"{name}: {detail}")

    def run(self, body) -> int:
        try:
            body(self)
        except StepFailed as e:
            self.why = str(e)
        except BaseException as e:  # the tool raised: its own words are the reason
            traceback.print_exc()
            self.why = f"{type(e).__name__}: {e}"[:1000]
        print(json.dumps({"ok": not self.why, "steps": self.steps, "why": self.why}), flush=True)
        return 0 if not self.why else 1


class StepFailed(Exception):
    pass


def wait_until(cond, timeout: float, poll: float = 1.0):
    """The value of ``cond()`` once truthy, or None after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(poll)


def main(body) -> None:
    sys.exit(Steps().run(body))
