"""The job picker contract (Req 1 AC 2).

The core loop asks ``next_job()`` for the next job to try and knows nothing of queues, projects
or ordering; a picker owns all of that. Hooks, by category:

- lifecycle (MUST): ``init(core)`` once, ``fini()`` at teardown.
- state changes (MUST), called synchronously inside ``core.push_event``: ``on_queue_update``,
  ``on_job_push``, ``on_job_state_change``, ``on_job_update``.
- session (MUST): ``begin_session()`` resets the cursor, ``next_job()`` returns a ready job or
  ``None``, ``end_session()`` closes the round.
- post-allocation (MUST): ``on_dispatch(jobid)`` (drop it), ``on_pend(jobid)`` (keep it).
- optional (MAY): ``on_config(config)``, ``on_job_rusage(job, usage)``, and ``constraint(job)``,
  called for the job ``next_job()`` just returned, before it is placed: None (place it anywhere it
  fits), a string (do not try it: it pends with that text, step ``backfill``), or a dict of host
  index -> slots to keep free while it is placed (a backfilling picker's reservations).

Rules a picker must keep: ``next_job()`` must not scan core state (keep your own structures,
fed by the hooks); never let set or hash order decide anything; a session may be cancelled
between any two ``next_job()`` calls, so keep no half-done work across calls; ``save_state``
and ``load_state`` make the picker part of a snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from xce.core.model import Job, Queue


@runtime_checkable
class JobPicker(Protocol):
    name: str

    def init(self, core: Any) -> None: ...
    def fini(self) -> None: ...
    def on_queue_update(self, queue: "Queue") -> None: ...
    def on_job_push(self, job: "Job") -> None: ...
    def on_job_state_change(self, job: "Job", new_state: str) -> None: ...
    def on_job_update(self, job: "Job") -> None: ...
    def begin_session(self) -> None: ...
    def next_job(self) -> "Job | None": ...
    def end_session(self) -> None: ...
    def on_dispatch(self, jobid: int) -> None: ...
    def on_pend(self, jobid: int) -> None: ...


class BasePicker:
    """Convenience base: optional hooks as no-ops, and a core reference after ``init``."""

    name = "base"

    def __init__(self) -> None:
        self.core: Any = None

    def init(self, core: Any) -> None:
        self.core = core

    def fini(self) -> None:
        self.core = None

    def on_config(self, config: Any) -> None:
        pass

    def on_job_rusage(self, job: "Job", usage: dict[str, int]) -> None:
        pass

    def save_state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        pass
