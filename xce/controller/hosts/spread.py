"""A job on every host of its placement.

The first host of a placement runs the job's command; every other host (a *secondary*) holds the
job's container and environment so that its tasks can be started there by ``xce launch``. So every
action that changes a running job (start, kill, suspend, resume) goes to each host of its
placement, and the job's usage is the sum of what each host measures: the last tick of every host,
added, is one tick of the job.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from xce.config.schema import MemorySettings
from xce.controller.service import Controller
from xce.protocol.actions import Action, StartJob


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


def enqueue_starts(ctl: Controller, job: dict[str, Any], start: StartJob) -> None:
    """The job's start for every host of its placement, each with its own memory limit
    (:func:`memory_limits`): what a host's control group holds the job to depends on its slots."""
    caps = memory_limits(job, start.placement, ctl.config.memory)
    for host in hosts_of(job):
        cap = caps.get(host)
        ctl.queue(host, start if cap is None or start.limits.get("mem") == cap else
                  dataclasses.replace(start, limits={**start.limits, "mem": cap}))


def memory_limits(job: dict[str, Any], placement: list[tuple[str, int]] | list[list[Any]],
                  memory: MemorySettings) -> dict[str, int]:
    """Each host's memory limit for the job, in bytes; the one place it is worked out.

    Its explicit limit (``-M``, ``--limit mem=``) holds on every host, as LSF's cgroup enforcement
    holds it. Where the cluster makes a reservation a limit (``memory.constrain_ram_space`` for one
    given as an amount: Slurm's ``--mem`` options, ``--request mem=``; ``memory.enforce_rusage``
    for ``rusage[mem=]`` written in a requirement), the memory the job reserved on a host is a limit
    there too: its amount per slot times its slots on that host. The smaller of the two applies.
    Hosts with neither are left out."""
    limits = json.loads(job["limits"]) if isinstance(job.get("limits"), str) else dict(job.get("limits") or {})
    explicit = int(limits["mem"]) if limits.get("mem") else None
    per_slot = _enforced_per_slot(job, memory)
    slots: dict[str, int] = {}
    for host, n in placement:  # the parts of a compound may share a host: its slots add up
        slots[host] = slots.get(host, 0) + int(n)
    out = {}
    for host, n in slots.items():
        caps = [c for c in (explicit, per_slot * n if per_slot else None) if c]
        if caps:
            out[host] = min(caps)
    return out


def _enforced_per_slot(job: dict[str, Any], memory: MemorySettings) -> int | None:
    """The memory the job reserves per slot, when the cluster enforces it as a limit. Of a compound
    or alternative requirement, the most any of its parts reserves per slot (a placement does not
    say which part a host holds, and a limit must never be below what was reserved there)."""
    written = _rusage_mem(job.get("request") or "", int(job.get("tasks") or 1))
    if written is not None:  # a rusage[mem=] written in the requirement is what the scheduler charges
        return written if memory.enforce_rusage else None
    if not memory.constrain_ram_space:
        return None
    requests = json.loads(job["requests"]) if isinstance(job.get("requests"), str) else job.get("requests") or {}
    return int(requests["mem"]) if requests.get("mem") else None


def _rusage_mem(text: str, tasks: int) -> int | None:
    if "mem" not in text:
        return None
    from xce.core.resreq import RequestSyntaxError, parse_request

    try:
        parsed = parse_request(text, tasks)
    except (RequestSyntaxError, ValueError):
        return None
    amounts = [p.rusage_amount("mem") for c in parsed.alternatives for p in c.primaries]
    return max(amounts) if any(amounts) else None


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
