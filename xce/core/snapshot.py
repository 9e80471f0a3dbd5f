"""Full core state as plain JSON, and back (Req 10 AC 16).

Only authoritative state is written: what events established (configuration, queues, hosts and
their values, jobs with their placement, accounts and preemption links), plus the picker's own
state, the clock, the PRNG and the decision counter. Everything derived (the numpy in-use
columns, queue counters, pools' in-use, the picker's candidate lists) is rebuilt on load by the
same code that maintains it live, so a loaded core is indistinguishable from one that replayed
the events. Between rounds no session is active, so the unsatisfiable cache is empty by
definition; it is written as such.

Request strings are shared objects (interned): they are written once in an object table and jobs
refer to them by id, so the format already supports sharing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from xce.core.decisions import PendReason
from xce.core.model import Account, Job
from xce.core.specs import FINISHED, PEND, ProjectSpec, QueueSpec, ResourceDef, SchedConfig

if TYPE_CHECKING:
    from xce.core.core import SchedulerCore

FORMAT_VERSION = 1


class SnapshotError(ValueError):
    """A snapshot this core cannot load; the message names the part that is wrong."""


def dump(core: "SchedulerCore") -> dict[str, Any]:
    if core.session is not None:
        raise SnapshotError("cannot snapshot while a scheduling session is running")
    requests: dict[str, int] = {}
    jobs = []
    for job in core.jobs.values():
        ref = requests.setdefault(job.request_text, len(requests))
        jobs.append({
            "jobid": job.jobid, "user": job.user, "queue": job.queue, "project": job.project,
            "job_type": job.job_type, "priority": job.priority, "queue_time": job.queue_time,
            "request": ref, "tasks": job.tasks, "state": job.state,
            "placement": [[h, n] for h, n in job.placement], "start_time": job.start_time,
            **({"run_limit": job.run_limit} if job.run_limit else {}),
            **({"exclusive": True, "claim": [[h, n] for h, n in job.claim]} if job.exclusive else {}),
            "accounts": [[h, r, a.reserved, a.allocated, a.used] for (h, r), a in job.accounts.items()],
            "slots_charged": job.slots_charged, "real_charged": job.real_charged,
            "shared_charged": dict(job.shared_charged), "waiting_for": list(job.waiting_for),
            "preempted_by": job.preempted_by, "resume_sent": job.resume_sent,
            "last_usage": dict(sorted(job.last_usage.items())),
            "last_pend": None if job.last_pend is None else [r.to_json() for r in job.last_pend],
            "failed_epoch": job.failed_epoch,
        })
    version, internal, gauss = core.rng.getstate()
    return {
        "version": FORMAT_VERSION,
        "objects": {"requests": [text for text, _ in sorted(requests.items(), key=lambda kv: kv[1])]},
        "config": core.config.to_json(),
        "resources": [d.to_json() for d in core.catalog.pushed()],
        "pools": {name: pool.total for name, pool in core.cluster.pools.items()},
        "release_epoch": core.cluster.release_epoch,
        "queues": [q.spec.to_json() for q in core.queues.values()],
        "projects": [p.spec.to_json() for p in core.projects.values()],
        "hosts": [{"name": h.name, "status": h.status, "static": h.static, "dynamic": h.dynamic}
                  for h in core.cluster.hosts],
        "jobs": jobs,
        "running": list(core.running),
        "picker": {"name": core.picker.name, "state": _picker_state(core)},
        "session": {"rounds": core.rounds, "seq": core._seq, "unsatisfiable": []},
        "clock": list(core.clock.params),
        "rng": [version, list(internal), gauss],
        "seed": core.seed,
        "resource_names": dict(sorted(core.resource_names.items())),
    }


def _picker_state(core: "SchedulerCore") -> Any:
    save = core._hooks.save_state
    return save() if save is not None else {}


def dumps(core: "SchedulerCore") -> str:
    return json.dumps(dump(core), sort_keys=True, separators=(",", ":"))


def load(core: "SchedulerCore", data: dict[str, Any]) -> None:
    """Restore ``core`` (a freshly constructed one) to the snapshot's state."""
    from xce.core.cluster import Pool
    from xce.core.model import Project, Queue
    from xce.core.pickers.registry import make_picker
    from xce.core.resreq import RequestSyntaxError, parse_request
    from xce.core.specs import HostSpec

    if not isinstance(data, dict):
        raise SnapshotError("snapshot data must be a JSON object")
    if data.get("version") != FORMAT_VERSION:
        raise SnapshotError(f"snapshot format version {data.get('version')!r} is not supported "
                            f"(this core reads version {FORMAT_VERSION})")
    try:
        core.config = SchedConfig.from_json(data["config"])
        core.resource_names = dict(data.get("resource_names", core.config.resource_names))
        for rdef in data["resources"]:
            core.catalog.register(ResourceDef.from_json(rdef))
        core.cluster.pools = {name: Pool(total=int(total)) for name, total in data["pools"].items()}
        core.projects = {p["name"]: Project(ProjectSpec.from_json(p)) for p in data["projects"]}
        picker = make_picker(data["picker"]["name"])
        core._install_picker(picker)
        core.queues.clear()  # cleared in place: the ledger and the picker view hold these dicts too
        for q in data["queues"]:
            spec = QueueSpec.from_json(q)
            core.queues[spec.name] = Queue(spec)
            core._queue_to_picker(core.queues[spec.name])
        core.cluster.upsert_hosts(HostSpec(h["name"], h["status"], dict(h["static"])) for h in data["hosts"])
        for h in data["hosts"]:
            core.cluster.set_values({h["name"]: dict(h["dynamic"])}, replace=True)
        texts = data["objects"]["requests"]
        core.jobs.clear()
        core.cluster.held.clear()
        for d in data["jobs"]:
            job = Job(jobid=d["jobid"], user=d["user"], queue=d["queue"], project=d["project"],
                      job_type=d["job_type"], priority=d["priority"], queue_time=d["queue_time"],
                      request_text=texts[d["request"]], tasks=d["tasks"], state=d["state"])
            try:
                job.request = parse_request(job.request_text, job.tasks)
                job.min_tasks = job.request.min_tasks
            except RequestSyntaxError as exc:
                job.request_error = str(exc)
            job.placement = tuple((h, int(n)) for h, n in d["placement"])
            job.start_time = d["start_time"]
            job.run_limit = int(d.get("run_limit", 0))
            job.exclusive = bool(d.get("exclusive", False))
            job.claim = tuple((h, int(n)) for h, n in d.get("claim", ()))
            job.accounts = {(h, r): Account(res, alloc, used) for h, r, res, alloc, used in d["accounts"]}
            job.slots_charged = d["slots_charged"]
            job.real_charged = d["real_charged"]
            job.shared_charged = dict(d["shared_charged"])
            job.waiting_for = tuple(d["waiting_for"])
            job.preempted_by = d["preempted_by"]
            job.resume_sent = d["resume_sent"]
            job.last_usage = dict(d["last_usage"])
            job.last_pend = None if d["last_pend"] is None else tuple(PendReason.from_json(r) for r in d["last_pend"])
            job.failed_epoch = int(d["failed_epoch"])
            if job.state in FINISHED:
                raise SnapshotError(f"job {job.jobid} is {job.state}: finished jobs are not part of core state")
            core.jobs[job.jobid] = job
            on = {core.cluster.index[h]: tasks for h, tasks in job.placement if h in core.cluster.index}
            if on:
                core.cluster.held[job.jobid] = on
            queue = core.queues[job.queue]
            if job.state == PEND:
                queue.pending += 1
            if job.slots_charged:
                queue.running += 1
                queue.running_by_user[job.user] = queue.running_by_user.get(job.user, 0) + 1
            if job.preempted_by is not None and job.state == "SSUSP":
                core.preempted[job.jobid] = job
        core.running.clear()
        core.running.update((jid, core.jobs[jid]) for jid in data["running"])
        core.cluster.rederive()
        core.cluster.release_epoch = int(data["release_epoch"])
        for job in core.jobs.values():
            picker.on_job_push(job)
        load_state = core._hooks.load_state
        if load_state is not None:
            load_state(data["picker"]["state"])
        session = data["session"]
        core.rounds = int(session["rounds"])
        core._seq = int(session["seq"])
        core.clock.set(*data["clock"])
        version, internal, gauss = data["rng"]
        core.rng.setstate((version, tuple(internal), gauss))
        core.seed = data["seed"]
    except SnapshotError:
        raise
    except KeyError as exc:
        raise SnapshotError(f"malformed snapshot: missing key {exc}") from exc
    except (TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
        raise SnapshotError(f"malformed snapshot: {type(exc).__name__}: {exc}") from exc
