"""The job picker contract (Req 1 AC 2), declared once: the core binds it, ``builtin_fcfs``
forwards a delegate's hooks by it, and the plugin guide's hook table is rendered from it
(``xce.core.pickers.hooktable``), so the three cannot drift apart.

The core loop asks ``next_job()`` for the next job to try and knows nothing of queues, projects
or ordering; a picker owns all of that. ``JobPicker`` holds what every picker MUST have; each
optional capability (MAY) is its own small Protocol in ``CAPABILITIES``. A picker has a capability
by defining its methods; one that defines them with the wrong shape is refused as soon as a
configuration names it (``xce.core.pickers.hooks.check``). The core looks the capabilities up when it installs a picker
and again after each ``on_queue_update`` (a queue handed to another picker brings that picker's
hooks), never inside a round.

Rules a picker must keep: ``next_job()`` must not scan core state (keep your own structures,
fed by the hooks); never let set or hash order decide anything; a session may be cancelled
between any two ``next_job()`` calls, so keep no half-done work across calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Protocol, runtime_checkable

if TYPE_CHECKING:
    from xce.core.model import Job, Queue
    from xce.core.pickers.view import PickerView
    from xce.core.specs import SchedConfig


@runtime_checkable
class JobPicker(Protocol):
    """The hooks every picker MUST have."""

    #: The registered name: the core compares it with the configured name to know whether a
    #: configuration push changes the picker.
    name: str

    def init(self, view: "PickerView") -> None:
        """once when the picker is installed (also on reconfiguration to another picker); `view` (a
        `PickerView`) is what it may read of the core"""

    def fini(self) -> None:
        """once when the picker is torn down"""

    def on_queue_update(self, queue: "Queue") -> None:
        """a queue is defined or changed (also at start, for every queue)"""

    def on_job_push(self, job: "Job") -> None:
        """a job arrives (submitted, or already running when the scheduler starts); only `PEND` jobs
        are candidates"""

    def on_job_state_change(self, job: "Job", new_state: str) -> None:
        """after the core applied a state change (`job.state` is already `new_state`)"""

    def on_job_update(self, job: "Job") -> None:
        """priority, queue or project changed (`xce modify`)"""

    def begin_session(self) -> None:
        """start of a round: reset your cursor"""

    def next_job(self) -> "Job | None":
        """return the next job to try, or `None` to end the round"""

    def end_session(self) -> None:
        """end of the round, also after a cancelled one"""

    def on_dispatch(self, jobid: int) -> None:
        """the job was placed: drop it"""

    def on_pend(self, jobid: int) -> None:
        """the job could not be placed this round: keep it"""


class OnConfig(Protocol):
    """configuration pushed (after the queues it defines were updated)"""

    def on_config(self, config: "SchedConfig") -> None: ...


class OnJobRusage(Protocol):
    """a running job's usage reported; a picker that has it sees every tick (none is coalesced away)"""

    def on_job_rusage(self, job: "Job", usage: dict[str, int]) -> None: ...


class Constraint(Protocol):
    """right after `next_job()` returned `job`, before it is placed: `None` (anywhere it fits), a
    text (not tried; it pends with that reason, step `backfill`), or `{host index: slots}` to keep
    free while it is placed (`easy_backfill` uses it for its reservations)"""

    def constraint(self, job: "Job") -> "str | dict[int, int] | None": ...


class PendNote(Protocol):
    """after `on_pend(jobid)`, when the job is told why it waits: `None`, or one more pend reason
    shown with the others (`xce jobs -l`; `easy_backfill` tells when and where its reservation
    expects to start the job)"""

    def pend_note(self, job: "Job") -> Any: ...


class HeldBack(Protocol):
    """after the round: `(queue name, head, jobs behind it, the same from the back)` for each queue
    whose walk stopped at a head that could not start (`strict_fcfs`); the core tells the jobs behind
    why they were not tried. Generate them lazily: the core reads only a few"""

    def held_back(self) -> "Iterator[tuple[str, Job, Iterator[Job], Iterator[Job]]]": ...


class SavesState(Protocol):
    """the picker's part of a snapshot (recording, replay): what the hooks alone would not rebuild
    (history, counters); without it the picker starts from the hooks alone"""

    def save_state(self) -> dict[str, Any]: ...
    def load_state(self, state: dict[str, Any]) -> None: ...


#: The optional capabilities, in the order the guide lists them.
CAPABILITIES: tuple[type, ...] = (OnConfig, OnJobRusage, SavesState, Constraint, PendNote, HeldBack)


class BasePicker:
    """Convenience base: ``self.view`` after ``init``, and no-op ``on_config``, ``on_job_rusage``,
    ``save_state`` and ``load_state`` so that a subclass may call ``super()``'s. The core counts
    these no-ops as absent: a picker that does not override them does not have the capability."""

    name = "base"

    def __init__(self) -> None:
        self.view: Any = None

    def init(self, view: "PickerView") -> None:
        self.view = view

    def fini(self) -> None:
        self.view = None

    @property
    def core(self) -> Any:
        """The name the guide gave this reference while pickers were handed the core itself: a
        plugin written then keeps working (it gets the view, which offers what the guide promised)."""
        return self.view

    @core.setter
    def core(self, view: Any) -> None:
        self.view = view

    def on_config(self, config: Any) -> None:
        pass

    def on_job_rusage(self, job: "Job", usage: dict[str, int]) -> None:
        pass

    def save_state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        pass
