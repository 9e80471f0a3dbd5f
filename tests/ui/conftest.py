"""Fixtures for the dashboard tests: a live cluster on 127.0.0.1, people with their own tokens,
and a real headless Chromium (Debian's ``chromium`` through ``chromedriver``)."""

from __future__ import annotations

import pytest

from ui_helpers import CONFIG, People
from xce.cluster import LocalCluster
from xce.testing.browser import Browser


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("ui")
    (base / "xce.toml").write_text(CONFIG)
    c = LocalCluster(base / "state", 2, 2, config=base / "xce.toml", round_interval=0.05, report_interval=0.5)
    c.start()
    yield c
    c.stop()


@pytest.fixture
def people(cluster, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    return People(cluster, work)


@pytest.fixture
def browser(cluster):
    """A fresh browser profile per test; fails the test if any page asked anything of another host."""
    b = Browser(cluster.url)
    try:
        yield b
        assert b.external_requests() == [], "a page requested something from outside the controller"
    finally:
        b.close()
