"""Host features in a cluster file: ``xce cluster export`` writes them and ``xce sim run``/``xce whatif``
read them back, so a simulated ``--constraint`` job finds the hosts it would find live."""

from __future__ import annotations

import pytest

from xce.config.loader import ConfigError
from xce.config.schema import ClusterConfig
from xce.sim.cluster_file import parse_cluster_text
from xce.whatif.cluster_file import render


def test_exported_features_are_read_back_as_the_hosts_features():
    text = render(ClusterConfig(), [("a", "ok", {"slots": 4, "features": ["bigmem", "ib"], "model": "EPYC"}),
                                    ("b", "ok", {"slots": 2})])
    hosts = {h.name: h.values for h in parse_cluster_text(text).hosts}
    assert hosts["a"]["features"] == ["bigmem", "ib"] and hosts["a"]["model"] == "EPYC"
    assert "features" not in hosts["b"]


def test_a_feature_that_is_not_a_name_is_refused_naming_where():
    with pytest.raises(ConfigError, match=r"sim.hosts\[0\].features"):
        parse_cluster_text('[[sim.hosts]]\nname = "a"\nfeatures = ["no-go"]\n')
