"""Whether a job could ever run on the cluster as it is registered: the check behind refusing
``-n 100`` on six slots at submission, and behind the pend reason "cannot run on the current
cluster" once the cluster has shrunk under a job that was accepted.

"Ever" means with every registered host empty and up: more tasks than all hosts' slots together,
more of a resource per task than the largest host has (a task's share is never split across hosts),
more in total than all hosts or a shared pool hold. A down host still counts: it may come back. With
no slot registered yet (a cluster starting) nothing is judged, nor is a resource no registered host
has (a host that has it may join). Memory is judged against a host's
``maxmem`` (its ``mem`` is what is free now).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xce.controller.service import Controller

#: The pend reason's step, so "pending by reason" counts these jobs apart.
STEP = "cluster"


@dataclass
class Capacity:
    """The registered cluster summed up once; :meth:`problem` is then cheap per job."""

    hosts: int = 0
    slots: int = 0
    largest: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)
    _seen: dict[tuple[str, int], str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, ctl: Controller) -> "Capacity":
        cap = cls(pools={n: p.total for n, p in ctl.config.shared_resources.items()})
        for h in ctl.hosts.values():
            values = ctl.host_values(h)
            cap.hosts += 1
            slots = values.get("slots", values.get("ncpus", 0))
            cap.slots += int(slots) if isinstance(slots, (int, float)) else 0
            for name, value in values.items():
                if name == "maxmem":
                    name = "mem"
                elif name == "mem":
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    cap.largest[name] = max(cap.largest.get(name, 0), int(value))
                    cap.total[name] = cap.total.get(name, 0) + int(value)
        return cap

    def problem(self, request_text: str, tasks: int) -> str | None:
        """Why a job of this requirement can never run here, or None (also when unsure)."""
        if not self.slots:  # no host, or none with a slot yet: a cluster still starting
            return None
        key = (request_text, tasks)
        if key not in self._seen:
            self._seen[key] = self._judge(request_text, tasks)
        return self._seen[key]

    def _judge(self, request_text: str, tasks: int) -> str | None:
        from xce.core.quantity import human_quantity
        from xce.core.resreq import RequestSyntaxError, parse_request

        try:
            parsed = parse_request(request_text, tasks)
        except (RequestSyntaxError, ValueError):
            return None  # refused elsewhere, with the parser's own message
        problems = []
        for alternative in parsed.alternatives:
            why = self._compound(alternative, human_quantity)
            if why is None:
                return None
            problems.append(why)
        return problems[0]

    def _compound(self, compound: Any, human) -> str | None:
        total_tasks = compound.total_tasks
        if total_tasks > self.slots:
            return (f"{total_tasks} tasks but the cluster has {self.slots} slots on {self.hosts} "
                    f"host{'s' if self.hosts != 1 else ''}")
        need: dict[str, int] = {}
        for primary in compound.primaries:
            for name, amount in primary.rusage:
                def show(v: int, name: str = name) -> str:
                    return human(name, v)

                if name in self.pools:
                    if amount * primary.tasks > self.pools[name]:
                        return (f"{show(amount * primary.tasks)} of {name} but its shared pool holds "
                                f"{show(self.pools[name])}")
                    continue
                if name not in self.largest:
                    continue  # no host has it yet: a host that does may join
                largest = self.largest[name]
                if amount > largest:
                    return f"{show(amount)} of {name} per task but the largest host has {show(largest)}"
                need[name] = need.get(name, 0) + amount * primary.tasks
        for name, amount in need.items():
            if amount > self.total.get(name, 0):
                return (f"{human(name, amount)} of {name} in all but the cluster has "
                        f"{human(name, self.total[name])}")
        return None
