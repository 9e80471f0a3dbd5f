"""A job on every host of its placement.

The first host of a placement runs the job's command; every other host (a *secondary*) holds the
job's container and environment so that its tasks can be started there by ``xce launch``. So every
action that changes a running job (start, kill, suspend, resume) goes to each host of its
placement, and the job's usage is the sum of what each host measures: the last tick of every host,
added, is one tick of the job.
"""

from __future__ import annotations

import json
from typing import Any

from xce.controller.service import Controller
from xce.protocol.actions import Action


def hosts_of(job: dict[str, Any]) -> list[str]:
    """The distinct hosts of the job's placement, its first (head) host first."""
    placement = job.get("placement")
    if isinstance(placement, str):
        placement = json.loads(placement or "[]")
    names = [h for h, _ in placement or []]
    if not names and job.get("head_host"):
        names = [job["head_host"]]
    return list(dict.fromkeys(names))


def secondaries(job: dict[str, Any]) -> list[str]:
    return [h for h in hosts_of(job) if h != job.get("head_host")]


def enqueue_all(ctl: Controller, job: dict[str, Any], action: Action, hosts: list[str] | None = None) -> None:
    """The same action for every host of the job (or of ``hosts``), the head host first."""
    for host in hosts if hosts is not None else hosts_of(job):
        ctl.queue(host, action)


def summed_tick(stored: dict[str, Any], host: str, tick: dict[str, int], hosts: list[str]) -> dict[str, int]:
    """Record ``host``'s latest tick in ``stored['hosts']`` and return the job's: the sum over its
    hosts of each one's latest. A host that has not reported yet counts as zero."""
    per_host = dict(stored.get("hosts") or {})
    per_host[host] = dict(sorted(tick.items()))
    stored["hosts"] = {h: per_host[h] for h in hosts if h in per_host}
    total: dict[str, int] = {}
    for t in stored["hosts"].values():
        for k, v in t.items():
            total[k] = total.get(k, 0) + int(v)
    return total
