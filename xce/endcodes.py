"""How a finished job ended, in one word beside its prose ``reason``.

The LSF and Slurm front-ends map these to ``TERM_RUNLIMIT`` or ``TIMEOUT``, ``CANCELLED by UID``,
``OUT_OF_MEMORY`` and so on; the prose is for people and may change, the word may not. Whoever knows
how a job ended decides its word: the worker for what it did itself (a run or memory limit, its own
shutdown) and what the kernel did (the OOM killer), the controller for everything it decides (a
kill, a lost host, a start that failed) and for plain exits. Exit code and signal are stored apart
(``exit_code``, ``exit_signal``), so ``EXIT`` says only that the job's own command ended badly.

The worker imports this, so it stays a plain list of names.
"""

from __future__ import annotations

DONE = "DONE"  # exit code 0
EXIT = "EXIT"  # its command ended with a non-zero exit code or a signal nobody here sent for a reason
KILLED = "KILLED"  # by a person (xce kill, bkill, scancel); the job's history names who
RUNLIMIT = "RUNLIMIT"  # its run limit
MEMLIMIT = "MEMLIMIT"  # its memory limit, or the kernel's out-of-memory killer
NODE_FAIL = "NODE_FAIL"  # its host was declared down, lost it, or shut down under it
PREEMPTED = "PREEMPTED"  # ended by preemption (XCE preempts by suspending, so no job ends so today)
NOT_STARTED = "NOT_STARTED"  # it could not start: no such command, no working directory, ...

CODES = (DONE, EXIT, KILLED, RUNLIMIT, MEMLIMIT, NODE_FAIL, PREEMPTED, NOT_STARTED)

#: The exit code of a job that never started and has none of its own: the shell's "the command
#: could not be run" (127). LSF and Slurm run a job's command through a shell, so theirs show it
#: for a job that could not start; every command of XCE shows it too (:func:`exit_code_of`).
NOT_STARTED_EXIT = 127


def exit_code_of(exit_code: int | None, code: str | None) -> int | None:
    """The exit code every command shows for a job: its own, or :data:`NOT_STARTED_EXIT` for a
    job that never started (``code`` NOT_STARTED) and so has none."""
    return NOT_STARTED_EXIT if exit_code is None and code == NOT_STARTED else exit_code

#: The word of an end the controller decides, by the state move that ends the job
#: (:mod:`xce.controller.jobs.states`); a caller that knows better passes ``end_code`` itself.
OF_MOVE = {"finish": DONE, "fail": EXIT, "kill": KILLED, "lose": NODE_FAIL}
