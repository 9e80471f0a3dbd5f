"""Applying the scheduler's decisions to the authoritative state.

The scheduler decides on a picture of the cluster that may be a moment old, so every decision
is checked against the current state before it takes effect, and a decision that no longer fits
is *rejected* with an event that tells the scheduler the truth: a JOB_STATE_CHANGE carrying the
job's real state (PEND when it is still waiting), so the scheduler releases what it charged.

* DISPATCH: the job must be PEND and every placement host registered and ``ok``. The job becomes
  RUN at once with its placement; every host of it gets a ``start`` action (the first runs the
  command, the others hold the job's container for its tasks: :mod:`xce.controller.hosts.spread`), with
  a key that lets ``xce launch`` start tasks through their workers.
* PREEMPT: each victim must be RUN on a live host. Victims become SSUSP **immediately** (not when
  the worker confirms) and each of their hosts gets a ``suspend`` action with the decision's signal:
  the scheduler has already counted their resources as freed, and the controller's state must
  agree with it, not lag behind it. Victims that no longer fit are rejected one by one.
* RESUME: the job must be SSUSP (a job a *user* suspended stays suspended); it becomes RUN and gets
  a ``resume`` action.
* PEND: the reasons are stored on the job only when they differ from what is stored.

Idempotency: a batch is one transaction and the ids of applied DISPATCH/PREEMPT/RESUME decisions
are stored with their outcome, so a retried id returns ``duplicate`` with the original outcome and
changes nothing. PEND decisions are idempotent by nature and are not recorded (a round emits one
per waiting job; storing them would dominate the store's write load).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import sqlalchemy as sa

from xce import jobfiles
from xce.controller.hosts import spread
from xce.controller.service import UPDATE_JOB, Controller, dumps
from xce.controller.store.prepared import Prepared
from xce.controller.store.schema import decisions as decisions_t, job_scripts
from xce.controller.web.models import DecisionEnvelope
from xce.core import decisions as core_decisions, events as ev
from xce.core.specs import PEND, RUN, SSUSP
from xce.protocol.actions import ResumeJob, StartJob, SuspendJob, encode

ACTOR = "scheduler"
_SEEN = Prepared(sa.select(decisions_t.c.id, decisions_t.c.outcome)
                 .where(decisions_t.c.id.in_(sa.bindparam("ids", expanding=True))), "ids")
_RECORD = Prepared(decisions_t.insert())


def start_job(job: dict[str, Any], placement: list[list[Any]], script: str | None = None,
              **at_dispatch: Any) -> StartJob:
    """Everything a worker needs to run the job, so it never has to ask the controller again, its
    spooled ``script`` included. Its output file names are final here, where the host they name is
    known: the submission expanded what it knew (:mod:`xce.jobfiles`)."""
    options = json.loads(job["options"]) if job.get("options") else {}
    command = json.loads(job["command"])
    stdout, stderr = job["stdout"], job["stderr"]
    if (stdout and "%" in stdout) or (stderr and "%" in stderr):
        known = jobfiles.values(jobid=job["id"], array_id=job["array_id"], index=job["array_index"],
                                name=job.get("name"), command=command, user=job["user"], host=placement[0][0])
        stdout, stderr = (None if p is None else jobfiles.expand(p, known) for p in (stdout, stderr))
    return StartJob(
        jobid=job["id"], run=job["start_time"], user=job["user"], command=command, script=script, cwd=job["cwd"],
        env=json.loads(job["env"]) if job["env"] else {}, stdout=stdout, stderr=stderr, tasks=job["tasks"],
        placement=[(h, n) for h, n in placement],
        requests=json.loads(job["requests"]) if job["requests"] else {}, host_requests=_per_host(job),
        limits=json.loads(job["limits"]) if job["limits"] else {}, run_limit=job.get("run_limit"),
        exclusive=bool(job.get("exclusive")), options=options, queue=job["queue"], project=job["project"],
        name=job.get("name"), array_id=job["array_id"], array_index=job["array_index"],
        array=tuple(options["array"]) if options.get("array") else None, **at_dispatch)


def _per_host(job: dict[str, Any]) -> dict[str, int]:
    """What the job reserves once on each of its hosts (``rusage[NAME=V/host]``), for its worker."""
    text = job.get("sched_request") or job.get("request") or ""
    if "/host" not in text:
        return {}
    from xce.core.resreq import parse_request

    primary = parse_request(text, int(job["tasks"])).alternatives[0].primaries[0]
    return dict(primary.rusage_host)


def start_payload(job: dict[str, Any], placement: list[list[Any]], script: str | None = None) -> dict[str, Any]:
    """The start action as its worker reads it."""
    return encode(start_job(job, placement, script))


class _Batch:
    def __init__(self, ctl: Controller, jobs_by_id: dict[int, dict[str, Any]]) -> None:
        self.ctl = ctl
        self.jobs = jobs_by_id
        self._capacity = None
        self._scripts: dict[int, str | None] = {}

    def script(self, script_id: int | None) -> str | None:
        """A spooled script, read once per batch (an array's elements dispatched together share it)."""
        if script_id is None:
            return None
        if script_id not in self._scripts:
            self._scripts[script_id] = self.ctl.conn.execute(
                sa.select(job_scripts.c.script).where(job_scripts.c.id == script_id)).scalar()
        return self._scripts[script_id]

    def capacity(self):
        """The registered cluster, summed once per batch (xce.controller.jobs.feasible)."""
        if self._capacity is None:
            from xce.controller.jobs.feasible import Capacity

            self._capacity = Capacity.of(self.ctl)
        return self._capacity

    def _host_problem(self, host: str) -> str | None:
        h = self.ctl.hosts.get(host)
        if h is None:
            return f"host {host} is not registered"
        if h.scheduling_status != "ok":
            return f"host {host} is {h.scheduling_status}"
        return None

    def _reject(self, jobid: int, why: str) -> dict[str, Any]:
        """Tell the scheduler the job's real state so it un-charges what it assumed."""
        job = self.jobs.get(jobid)
        if job is not None:
            self.ctl.publish(ev.JobStateChange(ts=time.time_ns(), jobid=jobid, state=job["state"],
                                               reason=f"rejected: {why}"))
        return {"jobid": jobid, "reason": why}

    def dispatch(self, d: core_decisions.Dispatch) -> dict[str, Any]:
        job = self.jobs.get(d.jobid)
        if job is None:
            return {"status": "rejected", "reason": f"job {d.jobid} does not exist"}
        why = None
        if job["state"] != PEND:
            why = f"cannot dispatch job {d.jobid}: it is {job['state']} (only a PEND job can be dispatched)"
        elif not d.placement:
            why = "empty placement"
        else:
            for host, n in d.placement:
                why = self._host_problem(host) or (f"placement gives host {host} {n} tasks" if n < 1 else None)
                if why:
                    break
        if job.get("gate") is not None:  # held (or otherwise gated) after the scheduler saw it
            from xce.controller.jobs import gates

            why = f"job {d.jobid} may not start yet ({job['gate']})"
            gates.withdraw(self.ctl, d.jobid, why)
            return {"status": "rejected", "jobid": d.jobid, "reason": why}
        if why:
            return {"status": "rejected", **self._reject(d.jobid, why)}
        placement = [[h, n] for h, n in d.placement]
        hosts_text = " ".join(f"{h}*{n}" for h, n in placement)
        self.ctl.move(job, "dispatch", f"dispatched to {hosts_text}", ACTOR, placement=dumps(placement),
                      head_host=placement[0][0], start_time=time.time_ns(), pend_reasons=None,
                      pend_category=None)
        queue = self.ctl.config.queues.get(job["queue"])
        start = start_job(job, placement, self.script(job.get("script_id")),
                          process_limit=queue.process_limit if queue is not None else None,
                          env_families=list(self.ctl.config.job_env.families), launch_key=secrets.token_hex(16),
                          task_servers={h: self.ctl.hosts[h].task_address for h in spread.hosts_of(job)
                                        if h in self.ctl.hosts and self.ctl.hosts[h].task_address})
        spread.enqueue_starts(self.ctl, job, start)
        return {"status": "applied"}

    def preempt(self, d: core_decisions.Preempt) -> dict[str, Any]:
        done, rejected = [], []
        for victim in d.victim_jobids:
            job = self.jobs.get(victim)
            if job is None:
                rejected.append({"jobid": victim, "reason": f"job {victim} does not exist"})
                continue
            why = None
            if job["state"] != RUN:
                why = f"cannot preempt job {victim}: it is {job['state']} (only a RUN job can be preempted)"
            else:
                why = self._host_problem(job["head_host"])
            if why:
                rejected.append(self._reject(victim, why))
                continue
            reason = f"preempted by job {d.preempting_jobid}"
            self.ctl.move(job, "preempt", reason, ACTOR, signal=d.signal)
            spread.enqueue_all(self.ctl, job, SuspendJob(jobid=victim, run=job["start_time"], signal=d.signal,
                                                         reason=reason))
            done.append(victim)
        status = "applied" if not rejected else ("partial" if done else "rejected")
        return {"status": status, "suspended": done, "rejected": rejected}

    def resume(self, d: core_decisions.Resume) -> dict[str, Any]:
        job = self.jobs.get(d.jobid)
        if job is None:
            return {"status": "rejected", "reason": f"job {d.jobid} does not exist"}
        if job["state"] != SSUSP:
            why = (f"cannot resume job {d.jobid}: it is {job['state']} "
                   f"(the scheduler resumes only a job it suspended, SSUSP)")
        else:
            why = self._host_problem(job["head_host"])
        if why:
            return {"status": "rejected", **self._reject(d.jobid, why)}
        self.ctl.move(job, "resume", "resumed by the scheduler", ACTOR)
        spread.enqueue_all(self.ctl, job, ResumeJob(jobid=d.jobid, run=job["start_time"], signal=d.signal,
                                                    reason="resumed by the scheduler"))
        return {"status": "applied"}

    def pend(self, d: core_decisions.Pend) -> dict[str, Any]:
        job = self.jobs.get(d.jobid)
        if job is None:
            return {"status": "rejected", "reason": f"job {d.jobid} does not exist"}
        if job["state"] != PEND:
            return {"status": "ignored", "reason": f"job {d.jobid} is {job['state']}"}
        if job.get("gate") is not None:  # the controller's own reason stands (xce.controller.jobs.gates)
            return {"status": "ignored", "reason": f"job {d.jobid} is gated ({job['gate']})"}
        reasons = [r.to_json() for r in d.reasons]
        never = self.capacity().problem(job["sched_request"], job["tasks"])
        if never is not None:
            from xce.controller.jobs import feasible

            reasons = [{"step": feasible.STEP, "text": f"cannot run on the current cluster: {never}"}]
        text = dumps(reasons)
        if job["pend_reasons"] == text:
            return {"status": "unchanged"}
        category = reasons[0]["step"][:32] if reasons else None
        UPDATE_JOB.execute(self.ctl.conn, {"jid": d.jobid, "pend_reasons": text, "pend_category": category})
        job["pend_reasons"] = text
        return {"status": "applied"}


def _jobids(d: core_decisions.Decision) -> list[int]:
    if isinstance(d, core_decisions.Preempt):
        return list(d.victim_jobids)
    return [d.jobid]  # type: ignore[attr-defined]


def apply(ctl: Controller, envelopes: list[DecisionEnvelope]) -> list[dict[str, Any]]:
    """Apply a batch in order; one result per envelope, in the same order."""
    parsed: list[core_decisions.Decision | str] = []
    for env in envelopes:
        try:
            parsed.append(core_decisions.from_json(env.decision, env.ts))
        except (KeyError, TypeError, ValueError) as exc:
            parsed.append(f"malformed decision: {exc!r}")
    ids = [e.id for e in envelopes]
    seen: dict[str, str] = {}
    with ctl.tx() as conn:
        for i in range(0, len(ids), 500):
            for did, outcome in _SEEN.tuples(conn, {"ids": ids[i:i + 500]}):
                seen[did] = outcome
        wanted = [j for d in parsed if not isinstance(d, str) for j in _jobids(d)]
        batch = _Batch(ctl, ctl.jobs_by_id(wanted))
        results, record = [], []
        now = time.time_ns()
        for env, d in zip(envelopes, parsed, strict=True):
            if env.id in seen:
                results.append({"id": env.id, **json.loads(seen[env.id]), "status": "duplicate"})
                continue
            if isinstance(d, str):
                results.append({"id": env.id, "status": "invalid", "reason": d})
                continue
            outcome = getattr(batch, d.OP.lower())(d)
            results.append({"id": env.id, **outcome})
            if ctl.metrics is not None:
                ctl.metrics.decisions.labels(d.OP, outcome["status"]).inc()
            if d.OP != "PEND":
                text = dumps(outcome)
                seen[env.id] = text
                record.append({"id": env.id, "ts": env.ts, "applied": now, "outcome": text})
        _RECORD.executemany(conn, record)
    return results
