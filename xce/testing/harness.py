"""Drive a ``SchedulerCore`` with events and look at what it decided."""

from __future__ import annotations

from typing import Any, Iterable

from xce.core import SchedulerCore, events as ev
from xce.core.decisions import Decision, Dispatch, Pend, Preempt, Resume
from xce.core.specs import ProjectSpec, QueueSpec, ResourceDef, SchedConfig
from xce.testing.builders import HostBuilder, JobBuilder


def compact(d: Decision) -> tuple:
    """A decision as a short tuple that reads well in an ``assert ==``."""
    if isinstance(d, Dispatch):
        return ("DISPATCH", d.jobid, d.placement)
    if isinstance(d, Pend):
        return ("PEND", d.jobid, tuple(r.step for r in d.reasons))
    if isinstance(d, Preempt):
        return ("PREEMPT", d.preempting_jobid, d.victim_jobids)
    if isinstance(d, Resume):
        return ("RESUME", d.jobid)
    raise TypeError(d)


class Recorder:
    """The decision sink: keeps every decision the core emits, in order."""

    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    def __call__(self, decision: Decision) -> None:
        self.decisions.append(decision)


class Harness:
    def __init__(self, queues: Iterable[QueueSpec] = (), *, picker: str = "builtin_fcfs", seed: int = 0,
                 resources: Iterable[ResourceDef] = (), validate: bool = True) -> None:
        self.recorder = Recorder()
        self.core = SchedulerCore(self.recorder, seed=seed)
        self.ts = 0
        self.events: list[ev.Event] = []
        self.validate = validate
        queues = tuple(queues) or (QueueSpec(name="normal"),)
        self.push(ev.ConfigPush(ts=self._tick(), config=SchedConfig(
            job_pick_plugin=picker, queues=queues, projects=(ProjectSpec("default"),),
            resources=tuple(resources))))

    def _tick(self) -> int:
        self.ts += 1_000_000_000
        return self.ts

    def push(self, event: ev.Event) -> None:
        self.events.append(event)
        self.core.clock.freeze_at(event.ts)
        self.core.push_event(event)
        if self.validate:
            self.core.validate()

    def hosts(self, *builders: HostBuilder) -> None:
        self.push(ev.WorkersPush(ts=self._tick(), hosts=tuple(b.spec() for b in builders)))

    def submit(self, *builders: JobBuilder) -> None:
        specs = []
        for b in builders:
            spec = b.spec()
            if spec.queue_time == 0:
                from dataclasses import replace

                spec = replace(spec, queue_time=self.ts)
            specs.append(spec)
        self.push(ev.JobsPush(ts=self._tick(), jobs=tuple(specs)))

    def state(self, jobid: int, state: str, reason: str = "") -> None:
        self.push(ev.JobStateChange(ts=self._tick(), jobid=jobid, state=state, reason=reason))

    def update(self, jobid: int, **changes: Any) -> None:
        self.push(ev.JobUpdate(ts=self._tick(), jobid=jobid, **changes))

    def queue_update(self, spec: QueueSpec) -> None:
        self.push(ev.QueueUpdate(ts=self._tick(), queue=spec))

    def usage(self, jobid: int, **usage: int) -> None:
        self.push(ev.JobRusage(ts=self._tick(), jobid=jobid, usage=usage))

    def resvals(self, values: dict[str, dict[str, Any]], full: bool = False) -> None:
        cls = ev.ResvalsFull if full else ev.ResvalsDelta
        self.push(cls(ts=self._tick(), values=values))

    def round_decisions(self) -> list[Decision]:
        start = len(self.recorder.decisions)
        self.push(ev.BeginRound(ts=self._tick()))
        return self.recorder.decisions[start:]

    def round(self) -> list[tuple]:
        """Run one round; its decisions in compact form."""
        return [compact(d) for d in self.round_decisions()]

    def inuse(self, host: str, res: str) -> int:
        return self.core.cluster.inuse_table().get(host, {}).get(res, 0)
