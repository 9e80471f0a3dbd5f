"""The job state machine table."""

import pytest

from xce.controller.jobs import states
from xce.core.specs import DONE, EXIT, PEND, RUN, SSUSP, UNKWN, USUSP


def test_edges_are_exactly_the_documented_machine():
    assert states.EDGES == {
        (PEND, RUN), (PEND, EXIT), (RUN, PEND),
        (RUN, DONE), (RUN, EXIT),
        (RUN, SSUSP), (SSUSP, RUN), (RUN, USUSP), (USUSP, RUN),
        (SSUSP, EXIT), (USUSP, EXIT),
        # a job can finish in the instant it is being suspended; the worker's report wins
        (SSUSP, DONE), (USUSP, DONE),
        # xce requeue: a person runs a finished job again
        (DONE, PEND), (EXIT, PEND),
        # a host that stops reporting: UNKWN until it returns (RUN, or its end) or is declared down
        (RUN, UNKWN), (UNKWN, RUN), (UNKWN, DONE), (UNKWN, EXIT),
        # declared down: a rerunnable job goes back to PEND from wherever it was on that host
        (SSUSP, PEND), (USUSP, PEND), (UNKWN, PEND),
    }


def test_finished_jobs_move_only_when_a_person_requeues_them():
    for move in states.MOVES.values():
        assert (DONE in move.sources or EXIT in move.sources) == (move.verb == "rerun")


def test_refusal_names_job_state_and_what_was_allowed():
    with pytest.raises(states.TransitionError) as err:
        states.target(12, PEND, "resume")
    assert str(err.value) == "cannot resume job 12: it is PEND (only a USUSP/SSUSP job can be resumed)"
    with pytest.raises(states.TransitionError, match=r"cannot kill job 3: it is DONE \(only a PEND/RUN/SSUSP/USUSP/UNKWN"):
        states.target(3, DONE, "kill")


@pytest.mark.parametrize("state,verb,expected", [
    (PEND, "dispatch", RUN), (PEND, "kill", EXIT), (RUN, "preempt", SSUSP), (SSUSP, "resume", RUN),
    (RUN, "suspend", USUSP), (USUSP, "resume", RUN), (RUN, "finish", DONE), (RUN, "fail", EXIT),
    (SSUSP, "lose", EXIT), (RUN, "requeue", PEND), (RUN, "unreach", UNKWN), (UNKWN, "reach", RUN),
    (UNKWN, "lose", EXIT), (UNKWN, "reschedule", PEND), (USUSP, "reschedule", PEND),
])
def test_allowed_moves(state, verb, expected):
    assert states.target(1, state, verb) == expected


@pytest.mark.parametrize("state,verb", [(PEND, "suspend"), (USUSP, "preempt"), (PEND, "requeue"), (SSUSP, "dispatch")])
def test_impossible_moves(state, verb):
    with pytest.raises(states.TransitionError):
        states.target(1, state, verb)
