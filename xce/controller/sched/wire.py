"""The feed as the scheduler reads it: the one place the controller's events become JSON.

The controller tells the scheduler what changed with the core's own events
(:mod:`xce.core.events`), and the scheduler decodes the feed back into them with
:func:`xce.core.events.from_json`, so both ends share one definition of each event. Two things are
the controller's own here:

* a CONFIG_PUSH carries, beside the core's configuration, the ``driver`` settings the scheduler
  process itself reads (its round cadence, its recording); the core never sees them;
* a JOBS_PUSH is written from the job rows directly (:func:`jobspec_json`), never through
  :class:`xce.core.specs.JobSpec` objects: an array of 100,000 jobs is pushed in the transaction
  that submits it, and building and encoding an object per job would cost several times the rest
  of that commit. A test checks the JSON is exactly ``JobSpec.to_json()``.
"""

from __future__ import annotations

import json
from typing import Any

from xce.core import events as ev


def payload(event: ev.Event, driver: dict[str, Any]) -> dict[str, Any]:
    """``event``'s payload as the feed carries it (``driver``: the scheduler process's settings)."""
    out = event.payload()
    if type(event) is ev.ConfigPush:
        out["driver"] = driver
    return out


def jobs_push(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """A JOBS_PUSH payload of job records (:func:`jobspec_json`)."""
    return {"njobs": len(specs), "jobs": specs}


def jobspec_json(row: dict[str, Any]) -> dict[str, Any]:
    """A job row as ``xce.core.specs.JobSpec.to_json()`` (checked against it by a test)."""
    placement = row.get("placement")
    return {
        "jobid": row["id"], "user": row["user"], "queue": row["queue"], "project": row["project"],
        "job_type": row["job_type"], "priority": row["priority"], "queue_time": row["submit_time"],
        "request": row["sched_request"], "tasks": row["tasks"], "state": row["state"],
        "placement": json.loads(placement) if placement else [],
        "start_time": row.get("start_time") or 0,
        **({"run_limit": row["run_limit"]} if row.get("run_limit") else {}),
        **({"exclusive": True} if row.get("exclusive") else {}),
    }
