"""The figures of the scheduler's rounds, as the scheduler process reports them.

The scheduler is a separate process that only ever calls the controller, so the controller learns
how its rounds go from what it sends: the figures of each round (start, duration, decisions) ride
along with the decisions it posts (``POST /v1/sched/decisions``, ``rounds``). ``/metrics`` turns
them into histograms and the dashboard shows the last one. Whether the scheduler is alive and how
far behind it is come from its reads of the event feed (:mod:`xce.controller.sched.feed`). Nothing here is
stored: a restarted controller knows nothing until the scheduler posts again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Round:
    ts: int  # wall clock of the round's start, ns
    duration_s: float
    decisions: int


class SchedulerWatch:
    def __init__(self) -> None:
        self.last_round: Round | None = None
        self.rounds = 0
        #: The last seq the scheduler asked to read after (for the lag metric).
        self.cursor = 0
        #: Monotonic time of the scheduler's last feed request (None: never seen by this leader).
        self.seen_mono: float | None = None
        #: Whether "scheduler lost" was said since it was last seen.
        self.lost_said = False

    def forget(self) -> None:
        """A new term: whatever this process saw of the scheduler in an earlier one is stale."""
        self.cursor, self.seen_mono, self.lost_said = 0, None, False

    def add_rounds(self, rounds: list[Round]) -> None:
        if rounds:
            self.rounds += len(rounds)
            self.last_round = max(rounds, key=lambda r: r.ts)
