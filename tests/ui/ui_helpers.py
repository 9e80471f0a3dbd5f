"""Fixtures and helpers of the dashboard tests: a live cluster on 127.0.0.1, people with their own
tokens, and a real headless Chromium (Debian's ``chromium`` through ``chromedriver``).

A module of its own rather than a ``conftest.py``: other directories' tests import their conftest
by the bare name ``conftest``, which a second conftest collected in the same run would shadow.
Test modules import the fixtures they use from here."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from xce.cluster import LocalCluster
from xce.testing.browser import Browser

CONFIG = """
cluster_name = "uitest"
default_queue = "normal"

[queues.normal]
priority = 30
description = "where the tests' jobs run"

[queues.night]
priority = 10
"""


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition", interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class People:
    """Tokens and API clients of named users on one cluster."""

    def __init__(self, cluster: LocalCluster, work: Path) -> None:
        self.cluster = cluster
        self.work = work
        self.tokens: dict[str, str] = {"admin": cluster.token("admin")}

    def token(self, name: str) -> str:
        """The token of user ``name`` (``admin``: the cluster's admin token)."""
        if name not in self.tokens:
            r = httpx.post(f"{self.cluster.url}/v1/admin/users", json={"name": name},
                           headers={"Authorization": f"Bearer {self.tokens['admin']}"}, timeout=30)
            r.raise_for_status()
            self.tokens[name] = r.json()["token"]
        return self.tokens[name]

    def api(self, who: str, method: str, path: str, body: Any = None, **params: Any) -> Any:
        r = httpx.request(method, self.cluster.url + path, json=body, params=params or None, timeout=30,
                          headers={"Authorization": f"Bearer {self.token(who)}"})
        r.raise_for_status()
        return r.json()

    def submit(self, who: str, command: list[str], **extra: Any) -> int:
        return self.api(who, "POST", "/v1/jobs", {"command": command, "cwd": str(self.work), **extra})["jobid"]

    def job(self, jobid: int) -> dict[str, Any]:
        return self.api("admin", "GET", f"/v1/jobs/{jobid}")


def log_in(b: Browser, token: str) -> None:
    b.get("/ui/login")
    b.css("#token").send_keys(token)
    b.css("#login").click()
    b.wait(lambda: b.all("#whoami"), 30, "the dashboard after logging in")


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
