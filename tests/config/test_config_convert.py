"""What the core is told: exact, sorted, and independent of the order the file was written in."""

from __future__ import annotations

import textwrap
from dataclasses import fields
from pathlib import Path

from xce.config import load_config, parse_config, to_sched_config
from xce.config.schema import QueueConfig
from xce.core.specs import ProjectSpec, QueueSpec, ResourceDef, SchedConfig

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_preemption_example_converts_exactly():
    sched = to_sched_config(load_config(EXAMPLES / "preemption.toml"))
    assert sched == SchedConfig(
        job_pick_plugin="builtin_fcfs",
        queues=(
            QueueSpec(
                name="high",
                priority=50,
                preemptible_queues=("low",),
                preemptible=False,
                preempt_policy="queue_priority_first",
                preempt_signal="SIGSTOP",
            ),
            QueueSpec(name="low", priority=10, max_running_per_user=20),
            QueueSpec(name="normal", priority=30, preemptible=False),
        ),
        projects=(ProjectSpec(name="default", priority=0),),
        resources=(),
        resource_names={"memory_rss": "mem"},
    )
    assert isinstance(sched.queues[0].preemptible_queues, tuple)


def test_licenses_example_converts_the_pool():
    sched = to_sched_config(load_config(EXAMPLES / "licenses.toml"))
    assert sched.resources == (ResourceDef(name="example.com/cfd-license", consumable=True, shared=True, total=4),)
    assert [p.name for p in sched.projects] == ["cfd", "default"]
    assert {q.name: q.project_name for q in sched.queues} == {"cfd": "cfd", "normal": None}


def test_output_does_not_depend_on_the_order_sections_are_written():
    a = parse_config(
        textwrap.dedent("""
        [queues.b]
        [queues.a]
        [queues.normal]
        [projects.z]
        [projects.default]
        [shared_resources."x.org/two"]
        total = 2
        [shared_resources."x.org/one"]
        total = 1
        [resource_names]
        zz = "mem"
        memory_rss = "mem"
        """)
    )
    b = parse_config(
        textwrap.dedent("""
        [shared_resources."x.org/one"]
        total = 1
        [shared_resources."x.org/two"]
        total = 2
        [projects.default]
        [projects.z]
        [queues.normal]
        [queues.a]
        [queues.b]
        [resource_names]
        memory_rss = "mem"
        zz = "mem"
        """)
    )
    sa, sb = to_sched_config(a), to_sched_config(b)
    assert sa == sb
    assert sa.to_json() == sb.to_json()
    assert [q.name for q in sa.queues] == ["a", "b", "normal"]
    assert [r.name for r in sa.resources] == ["x.org/one", "x.org/two"]
    assert list(sa.resource_names) == list(sb.resource_names) == ["memory_rss", "zz"]


def test_every_queue_spec_field_comes_from_the_config():
    """A field added to QueueSpec must be carried over from QueueConfig, not left at its default."""
    spec_fields = {f.name for f in fields(QueueSpec)} - {"name"}
    assert spec_fields <= set(QueueConfig.model_fields)


def test_round_trips_through_json():
    sched = to_sched_config(load_config(EXAMPLES / "preemption.toml"))
    assert SchedConfig.from_json(sched.to_json()) == sched
