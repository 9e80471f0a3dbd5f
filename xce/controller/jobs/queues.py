"""Queues an administrator closed with ``xceadmin queue close`` (LSF's ``badmin qclose``).

The file says how a queue is set up; a closure is an operator's act on top of it, kept in the
store (``meta``), so it survives a controller restart and a reload of the file, and is undone by
``xceadmin queue open`` rather than by editing the file. A queue the file itself closes
(``status = "closed"``) is opened by editing the file: one place decides each closure.
A closed queue refuses submissions and dispatches nothing (``QueueConfig.status``); what it
runs finishes.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from xce.config.schema import ClusterConfig
from xce.controller.errors import Conflict, NotFound

#: The ``meta`` key: ``{queue: reason}`` of every queue closed by an administrator.
CLOSED_KEY = "queues_closed"
log = logging.getLogger("xce.controller")


def closures(ctl: Any) -> dict[str, str]:
    return json.loads(ctl.meta_get(CLOSED_KEY) or "{}")


def overlay(ctl: Any, cfg: ClusterConfig) -> tuple[ClusterConfig, dict[str, str]]:
    """``cfg`` with the administrators' closures applied (what the scheduler and submissions obey),
    and the reason of each closure of one of its queues (for the views)."""
    closed = {n: r for n, r in closures(ctl).items() if n in cfg.queues}
    if not closed:
        return cfg, closed
    changed = {n: cfg.queues[n].model_copy(update={"status": "closed"}) for n in closed}
    return cfg.model_copy(update={"queues": {**cfg.queues, **changed}}), closed


def set_closed(ctl: Any, name: str, reason: str | None, actor: str) -> dict[str, Any]:
    """Close queue ``name`` with ``reason``, or open it (None); the scheduler is told at once."""
    if name not in ctl.config.queues:
        raise NotFound(f"no queue named {name!r} (expected one of: {', '.join(sorted(ctl.config.queues))})")
    with ctl.tx():
        closed = closures(ctl)
        if reason is None:
            if name not in closed and ctl.config.queues[name].status == "closed":
                raise Conflict(f"queue {name!r} is closed by the configuration file (status = \"closed\"): "
                               f"open it there and run xceadmin reconfig")
            closed.pop(name, None)
        else:
            closed[name] = reason
        ctl.meta_set(CLOSED_KEY, json.dumps(dict(sorted(closed.items()))))
        ctl.apply_queue_closures()
    log.warning("queue %s %s by %s", name, "opened" if reason is None else f"closed: {reason}", actor)
    return {"name": name, "status": "open" if reason is None else "closed", "reason": reason}
