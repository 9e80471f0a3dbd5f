"""From the operator's file to what the scheduling core is told.

The core never sees TOML or pydantic: it gets a :class:`~xce.core.specs.SchedConfig` of frozen
records. Everything is sorted by name here, because the core's decisions (and so replay files)
must not depend on the order an operator happened to write the sections in.
"""

from __future__ import annotations

from xce.config.schema import ClusterConfig, QueueConfig
from xce.core.specs import ProjectSpec, QueueSpec, ResourceDef, SchedConfig


def queue_spec(name: str, q: QueueConfig) -> QueueSpec:
    """One queue; ``preemptible_queues`` keeps the operator's order, since a victim policy may rank by it."""
    return QueueSpec(
        name=name,
        priority=q.priority,
        status=q.status,
        active=q.active,
        max_running=q.max_running,
        max_running_per_user=q.max_running_per_user,
        project_name=q.project_name,
        job_pick_plugin=q.job_pick_plugin,
        preemptible_queues=tuple(q.preemptible_queues),
        preemptible=q.preemptible,
        preempt_policy=q.preempt_policy,
        preempt_signal=q.preempt_signal,
        run_limit=None if q.run_limit is None else q.run_limit * 60,
        max_run_limit=None if q.max_run_limit is None else q.max_run_limit * 60,
        backfill_depth=q.backfill_depth,
        reservations=q.reservations,
        fairshare_by=q.fairshare_by,
        shares=tuple(sorted(q.shares.items())),
        fairshare_half_life=q.fairshare_half_life,
    )


def to_sched_config(cfg: ClusterConfig) -> SchedConfig:
    """The scheduler's view of ``cfg``; equal inputs give equal (and equally ordered) outputs."""
    return SchedConfig(
        job_pick_plugin=cfg.scheduler.job_pick_plugin,
        queues=tuple(queue_spec(name, cfg.queues[name]) for name in sorted(cfg.queues)),
        projects=tuple(ProjectSpec(name=name, priority=cfg.projects[name].priority) for name in sorted(cfg.projects)),
        resources=tuple(
            ResourceDef(name=name, consumable=True, shared=True, total=cfg.shared_resources[name].total)
            for name in sorted(cfg.shared_resources)
        ),
        resource_names=dict(sorted(cfg.resource_names.items())),
    )
