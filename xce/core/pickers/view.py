"""What a job picker may read of the core (``PickerView``), as ``xce.core.preempt.flow`` gives a
preemption policy its ``PreemptionView``.

A picker handed the whole core could reach anything, and every internal became a promise to
plugins; the view is the list of what pickers actually read, so the rest of the core may change.
It is made once per core and read on the hot path of every round (a simulation asks it millions
of times), so it holds the core's own objects, never copies: ``queues``, ``jobs`` and ``running``
are the live dicts (read them, never change them), ``cluster`` the live cluster (read it; the one
thing a picker may try on it, placing a job on slots not free yet, is ``placement_if_freed``).

Pickers were handed the core itself before, and the plugin guide promised ``self.core`` after
``init`` and ``self.core.rng``: ``BasePicker.core`` still names the view, which has ``rng``, and
anything else a plugin of that time read fails with "'PickerView' object has no attribute ...".
(No ``__getattr__`` to word it better: a class that has one pays for it on every attribute read.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from xce.core.alloc.allocator import Allocator

if TYPE_CHECKING:
    from xce.core.core import SchedulerCore
    from xce.core.model import Job
    from xce.core.session import Session


class PickerView:
    __slots__ = ("queues", "jobs", "running", "cluster", "rng", "session", "now", "create_picker",
                 "fails_as_before", "_clock", "_refusals")

    #: Queue name -> Queue, every queue the core knows.
    queues: dict[str, Any]
    #: Job id -> Job, every job the core knows (pending, running, suspended).
    jobs: dict[int, "Job"]
    #: Jobs holding slots, in the order they started.
    running: dict[int, "Job"]
    #: The hosts and what is charged on them (``xce.core.cluster.Cluster``).
    cluster: Any
    #: The core's only source of randomness: a replay must draw the same numbers.
    rng: Any
    #: The round in progress (``session.ts`` is its time), None between rounds.
    session: "Session | None"
    #: ``now()``: the core's clock (ns).
    now: Callable[[], int]
    #: ``create_picker(name)``: a registered picker, checked, not yet initialised (``builtin_fcfs``
    #: hands a queue to the picker its ``job_pick_plugin`` names).
    create_picker: Callable[[str], Any]
    #: ``fails_as_before(job)``, during a round: True when the core knows, without placing it, that
    #: ``job`` cannot start now for the reason it was last told (nothing was released since it
    #: failed, or fewer slots are free than it needs). The core records it as offered and failed,
    #: so a picker that does not listen to ``on_pend`` may leave it out of the round.
    fails_as_before: Callable[["Job"], bool]

    def __init__(self, core: "SchedulerCore", create_picker: Callable[[str], Any]) -> None:
        for name, value in (("queues", core.queues), ("jobs", core.jobs), ("running", core.running),
                            ("cluster", core.cluster), ("rng", core.rng), ("session", None),
                            ("now", core.clock.now), ("create_picker", create_picker),
                            ("fails_as_before", core._fails_as_before), ("_clock", core.clock),
                            ("_refusals", core._refusals)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the picker view is read-only (cannot set {name!r})")

    def event_ts(self) -> int:
        """The clock's ``virtual_base`` (``xce.core.clock``): in a discrete simulation, the ts of the
        event being applied (when a job ended, say)."""
        return self._clock.params.virtual_base

    def refused_before(self, job: "Job", text: str) -> bool:
        """Whether ``job`` was last told exactly the refusal ``text`` (a ``constraint`` answer) and
        nothing with it: a picker refusing it again may leave it out of the round, since offering
        it would tell it nothing new."""
        told = job.last_pend
        return told is not None and told is self._refusals.get(text)

    def placement_if_freed(self, job: "Job", freed: dict[int, int]) -> dict[int, int] | None:
        """Host index -> slots where the allocator would place ``job`` if the ``freed`` slots (host
        index -> slots) were free too, or None; nothing stays charged."""
        cluster, session = self.cluster, self.session
        hosts = list(freed)
        amounts = [freed[i] for i in hosts]
        allocator = Allocator(cluster, session, lambda: session.cancelled)
        with cluster.neutral():
            cluster.charge_many(hosts, "slots", [-n for n in amounts])
            try:
                alloc, _ = allocator.place(job)
                placed = None
                if alloc is not None:
                    placed = {}
                    for i, n in (*alloc.slots, *alloc.claim):
                        placed[i] = placed.get(i, 0) + n
                    allocator.rollback(alloc)
            finally:
                cluster.charge_many(hosts, "slots", amounts)
        return placed


def set_session(view: PickerView, session: "Session | None") -> None:
    """The core's side of ``view.session``: set when a round begins, cleared when it ends."""
    object.__setattr__(view, "session", session)
