"""What :func:`xce.controller.jobs.gates.tick` must look at again, gathered as jobs move.

Looking at every gated job a few times a second would cost a query per gate whatever happened;
instead each move (:meth:`xce.controller.service.Controller.move`) notes what it may have changed:
the array of an element with a running limit (a place may have opened), and whether a job started
or ended (a dependency may now be met, or never). A reload (start, takeover, rollback) forgets
what was noted, so the next look sweeps everything once.
"""

from __future__ import annotations

from typing import Any

_ENDED = ("DONE", "EXIT")


class GateWork:
    def __init__(self) -> None:
        self.arrays: dict[int, int] = {}  # array id -> its running limit
        self.deps = False
        self.sweep = True  # everything, once: at start and after a takeover or a rollback

    def moved(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        if job.get("array_limit"):
            self.arrays[job["array_id"]] = job["array_limit"]
        if old == "PEND" or new in _ENDED:
            self.deps = True

    def forget(self) -> None:
        self.arrays, self.deps, self.sweep = {}, False, True

    def take(self) -> tuple[dict[int, int], bool, bool]:
        """(arrays, dependencies, sweep) noted since the last take, which starts afresh."""
        taken = self.arrays, self.deps, self.sweep
        self.arrays, self.deps, self.sweep = {}, False, False
        return taken
