"""``[host_groups]``: named sets of hosts a job's host list may use; a group name never means a
host, groups do not nest, and every mistake names its key path."""

from __future__ import annotations

import textwrap

import pytest

from xce.config.loader import ConfigError, parse_config


def errors_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(textwrap.dedent(text), "site.toml")
    return [f"{path}: {msg}" for path, msg in info.value.errors]


def test_a_group_lists_its_hosts():
    cfg = parse_config('[host_groups]\ngpu = ["h1", "h2"]\nbig = ["h3"]\n', "site.toml")
    assert cfg.host_groups == {"gpu": ["h1", "h2"], "big": ["h3"]}
    assert parse_config("", "site.toml").host_groups == {}


def test_a_group_named_like_a_configured_host_is_refused():
    assert errors_of("""
        [hosts.h1]
        slots = 2
        [host_groups]
        h1 = ["h2"]
        """) == ["host_groups.h1: 'h1' is a host name (in [hosts]): a group needs a name no host has"]


def test_nested_empty_duplicated_and_malformed_members_are_refused_by_path():
    assert errors_of("""
        [host_groups]
        all = ["h1", "gpu", "h1", "bad name"]
        gpu = ["h2"]
        none = []
        """) == [
        "host_groups.all[1]: 'gpu' is a group: list its hosts instead (groups do not nest)",
        "host_groups.all[2]: host 'h1' is listed twice",
        "host_groups.all[3]: 'bad name' is not a host name (letters, digits, '.', '_' or '-')",
        "host_groups.none: an empty group: list its hosts, or remove it",
    ]


def test_members_must_be_a_list_of_names():
    (err,) = errors_of('[host_groups]\ngpu = "h1"\n')
    assert err.startswith("host_groups.gpu: ")
