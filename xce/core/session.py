"""What one scheduling session (one BEGIN_ROUND) knows and forgets at its end.

Everything here is valid only while host values cannot change, which is exactly a session:
events are applied between rounds, never during one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xce.core.decisions import PendReason


@dataclass(slots=True)
class Session:
    ts: int
    cancelled: bool = False
    #: Unsatisfiable cache (Req 7): key -> (reasons, the job that proved it).
    unsatisfiable: dict[Any, tuple[tuple[PendReason, ...], int]] = field(default_factory=dict)
    #: id(request) -> (dispatches so far, the reasons ``Allocator.explain`` gave): valid until the
    #: next dispatch, the only thing that changes the cluster during a session.
    explained: dict[int, tuple[int, tuple[PendReason, ...]]] = field(default_factory=dict)
    dispatched: int = 0
    #: Free slots in the cluster as of the last dispatch (None: to be computed).
    free_total: int | None = None

    def free_slots(self, cluster: Any) -> int:
        if self.free_total is None:
            self.free_total = cluster.free_slot_total()
        return self.free_total
