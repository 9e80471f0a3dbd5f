"""The job state machine: every move a job can make, in one table.

All code that changes a job's state asks :func:`target` first, so a transition that is not in
the table cannot happen anywhere, and the refusal always reads the same way
(``cannot resume job 12: it is PEND (only a USUSP/SSUSP job can be resumed)``).

Moves are named by what causes them, not by their endpoints, because the same edge can have
different causes (RUN -> EXIT is a kill, a failure or a lost worker) and because the
message a person reads must say what *they* tried to do.

Two edges go beyond the minimal machine on purpose:

* ``finish`` (exit status 0) is accepted from SSUSP/USUSP as well as RUN: a job can finish in
  the instant between the controller deciding to suspend it and the worker sending the
  signal; the worker's report of what really happened wins.
* ``requeue`` (RUN -> PEND) is only for a dispatch that was never delivered to a worker (the
  worker vanished before fetching it, or refused it); a job that really started is never
  requeued silently. ``rerun`` (DONE/EXIT -> PEND) is ``xce requeue``: a person runs a finished
  job again, its history kept.
  ``reschedule`` is the other way back to PEND from a host: a job submitted ``--rerunnable``
  whose host an administrator declared down, or a running job someone requeued, once its
  processes have ended.

A job whose host stops reporting goes RUN -> UNKWN (``unreach``): nobody knows whether it still
runs, so it keeps its slots; the host's return takes it back to RUN (``reach``) or reports its end.
"""

from __future__ import annotations

from dataclasses import dataclass

from xce.core.specs import DONE, EXIT, JOB_STATES, PEND, RUN, SSUSP, UNKWN, USUSP

__all__ = ["MOVES", "EDGES", "Move", "TransitionError", "target", "UNFINISHED"]

UNFINISHED = (PEND, RUN, SSUSP, USUSP, UNKWN)


@dataclass(frozen=True, slots=True)
class Move:
    verb: str
    participle: str
    sources: tuple[str, ...]
    to: str


MOVES: dict[str, Move] = {
    m.verb: m
    for m in (
        Move("dispatch", "dispatched", (PEND,), RUN),
        Move("requeue", "requeued", (RUN,), PEND),
        Move("rerun", "requeued", (DONE, EXIT), PEND),
        Move("kill", "killed", (PEND, RUN, SSUSP, USUSP, UNKWN), EXIT),
        Move("suspend", "suspended", (RUN,), USUSP),
        Move("preempt", "preempted", (RUN,), SSUSP),
        Move("resume", "resumed", (USUSP, SSUSP), RUN),
        Move("finish", "finished", (RUN, SSUSP, USUSP, UNKWN), DONE),
        Move("fail", "failed", (RUN, SSUSP, USUSP, UNKWN), EXIT),
        Move("lose", "lost", (RUN, SSUSP, USUSP, UNKWN), EXIT),
        Move("unreach", "marked unknown", (RUN,), UNKWN),
        Move("reach", "found running", (UNKWN,), RUN),
        Move("reschedule", "rescheduled", (RUN, SSUSP, USUSP, UNKWN), PEND),
    )
}

#: Every (from, to) pair some move allows: the state diagram, for documentation and tests.
EDGES: frozenset[tuple[str, str]] = frozenset((s, m.to) for m in MOVES.values() for s in m.sources)

assert all(s in JOB_STATES and m.to in JOB_STATES for m in MOVES.values() for s in m.sources)


class TransitionError(Exception):
    """A move the table does not allow from the job's current state; ``str()`` says why."""

    def __init__(self, jobid: int, state: str, verb: str) -> None:
        move = MOVES[verb]
        self.jobid, self.state, self.verb = jobid, state, verb
        super().__init__(
            f"cannot {verb} job {jobid}: it is {state} "
            f"(only a {'/'.join(move.sources)} job can be {move.participle})"
        )


def target(jobid: int, state: str, verb: str) -> str:
    """The state ``verb`` takes a job in ``state`` to, or :class:`TransitionError`."""
    move = MOVES[verb]
    if state not in move.sources:
        raise TransitionError(jobid, state, verb)
    return move.to
