"""The alternative cluster of ``xce whatif``: --set, --hosts and --config on the exported cluster file,
validated by the production loader."""

from __future__ import annotations

import pytest

from xce.config.loader import ConfigError
from xce.config.schema import ClusterConfig, QueueConfig
from xce.sim.cluster_file import parse_cluster_text
from xce.whatif import alter, cluster_file

HOSTS = [("a1", "ok", {"slots": 4, "maxmem": 8 << 30, "ncpus": 4, "type": "X86_64"}),
         ("a2", "unreach", {"slots": 2, "maxmem": 4 << 30, "example.com/gpu": 1, "model": 'quote " and é'})]


def exported() -> str:
    cfg = ClusterConfig(cluster_name="c", queues={"normal": QueueConfig(priority=30),
                                                  "high": QueueConfig(priority=50, preemptible_queues=["normal"])})
    return cluster_file.render(cfg, HOSTS, version="test")


def test_the_export_reads_back_as_the_same_cluster():
    sim = parse_cluster_text(exported())
    assert [(h.name, h.values) for h in sim.hosts] == [
        ("a1", {"slots": 4, "ncpus": 4, "maxmem": 8 << 30, "mem": 8 << 30, "type": "X86_64"}),
        ("a2", {"slots": 2, "ncpus": 2, "maxmem": 4 << 30, "mem": 4 << 30, "example.com/gpu": 1,
                "model": 'quote " and é'})]
    assert {q.name: q.priority for q in sim.config.queues} == {"high": 50, "normal": 30}
    assert "# status when exported: unreach" in exported()


def test_set_hosts_and_config_make_the_alternative():
    text = alter.alternative(exported(), settings=["queue.normal.priority=40", "scheduler.job_pick_plugin=builtin_fcfs",
                                                   "queues.high.description=urgent work"], hosts="+2")
    sim = parse_cluster_text(text)
    assert {q.name: q.priority for q in sim.config.queues} == {"high": 50, "normal": 40}
    assert [h.name for h in sim.hosts] == ["a1", "a2", "a2-whatif1", "a2-whatif2"]
    assert sim.hosts[-1].values["example.com/gpu"] == 1
    assert [h.name for h in parse_cluster_text(alter.alternative(exported(), hosts="-1")).hosts] == ["a1"]
    other = 'default_queue = "batch"\n[queues.batch]\npriority = 1\n'
    sim = parse_cluster_text(alter.alternative(exported(), config_text=other))
    assert [q.name for q in sim.config.queues] == ["batch"] and len(sim.hosts) == 2


@pytest.mark.parametrize("kw, message", [
    ({"settings": ["queue.normal.priority"]}, "expected KEY.PATH=VALUE"),
    ({"settings": ["sim.hosts=1"]}, "hosts are changed with --hosts"),
    ({"hosts": "two"}, "expected +N"),
    ({"hosts": "-2"}, "only 2 host(s)"),
])
def test_bad_alternatives_are_one_line(kw, message):
    with pytest.raises(alter.AlterError) as exc:
        alter.alternative(exported(), **kw)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_setting_the_schema_refuses_names_its_key():
    text = alter.alternative(exported(), settings=["queue.normal.priority=high"])
    with pytest.raises(ConfigError, match=r"queues\.normal\.priority"):
        parse_cluster_text(text, "alt")
