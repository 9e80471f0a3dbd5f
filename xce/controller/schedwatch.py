"""What the controller knows of the scheduler process: whether it is alive, how far behind the
event feed it is, and how its rounds go.

The scheduler is a separate process that only ever calls the controller, so the controller learns
about it from those calls: every ``/v1/sched/...`` request made with the scheduler's token counts
as a sign of life (it long-polls the feed about once a second while idle), and the scheduler sends
the figures of its rounds (duration, decisions) along with the decisions it posts. Both the
dashboard and ``/metrics`` read them from here; nothing is stored, a restarted controller simply
knows nothing until the scheduler calls again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

#: A scheduler that has not called for this long is shown as not responding. It long-polls the feed
#: with a wait of about a second, so only a round far longer than any healthy one, a hang, or a
#: dead process gets there.
ALIVE_WITHIN_S = 15.0


@dataclass(frozen=True, slots=True)
class Round:
    ts: int  # wall clock of the round's start, ns
    duration_s: float
    decisions: int


class SchedulerWatch:
    def __init__(self) -> None:
        self.last_contact_mono: float | None = None
        self.last_round: Round | None = None
        self.rounds = 0

    def contact(self) -> None:
        self.last_contact_mono = time.monotonic()

    def add_rounds(self, rounds: list[Round]) -> None:
        if rounds:
            self.rounds += len(rounds)
            self.last_round = max(rounds, key=lambda r: r.ts)

    def contact_age(self) -> float | None:
        return None if self.last_contact_mono is None else max(0.0, time.monotonic() - self.last_contact_mono)

    def alive(self) -> bool:
        age = self.contact_age()
        return age is not None and age <= ALIVE_WITHIN_S

    def status(self, lag_events: int, lag_seconds: float) -> dict[str, Any]:
        """The scheduler as people see it on the dashboard."""
        r = self.last_round
        return {"alive": self.alive(), "contact_age_s": self.contact_age(), "lag_events": lag_events,
                "lag_seconds": lag_seconds, "rounds": self.rounds,
                "last_round": None if r is None else {"ts": r.ts, "duration_s": r.duration_s,
                                                      "decisions": r.decisions}}
