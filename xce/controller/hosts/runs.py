"""Fencing by run: which run of a job an action is for, and which run a worker's news is about.

A job runs again under its id when it is requeued (a host declared down with ``--requeue``, a
worker refusing it, ``xce requeue``), and the run it leaves behind may still be running on a host
the controller could not reach. So a run has an identity, the job's ``start_time`` (its dispatch
time in ns, the ``run`` of its start action: no counter to keep, and a run's accounting already
starts there), every action names the run it is for and every report the run it is about. The
controller's rules about runs are here:

* a report about another run than the job's current one is news of a run the controller has
  ended: it changes nothing of the job; if that run still runs, it is told to stop (that run, by
  its number: the worker's current run of the job, if it has one, is not touched);
* a run the controller declares lost on a host never starts there afterwards: its start action
  goes in the transaction that declares it (delivered or not), so a worker that fetches its actions
  again (a restarted one fetches from the beginning) finds none. The decision to call a run lost
  and the start of its command cannot both happen: the worker reports the runs it holds, those
  still starting included, and a run it holds is not declared lost; nor, on a worker back from
  silence, is a run whose start it fetched and has not acknowledged (it may be carrying it out: its
  report was made before), and a worker journals a start before its command can begin, so a
  restarted one adopts what its spawner started as it died.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from xce.controller.store.schema import actions

#: Reports that say a run is still there (on the host that sends them).
ALIVE = frozenset({"usage", "started", "running", "suspended", "resumed"})


def current(job: dict[str, Any]) -> int | None:
    """The job's current run (None: it has none, being pending or never dispatched)."""
    return job.get("start_time")


def stale(job: dict[str, Any], run: int | None) -> bool:
    """Whether news of ``run`` is about a run other than the job's current one (a worker that names no
    run speaks of the current one, as it always did)."""
    return run is not None and run != current(job)


def forget_start(conn: Any, jobid: int, host: str) -> None:
    """The job's start on ``host`` goes, delivered or not, with the decision that its run is over."""
    conn.execute(sa.delete(actions).where(actions.c.jobid == jobid, actions.c.host == host,
                                          actions.c.kind == "start"))
