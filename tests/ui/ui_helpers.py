"""Fixtures and helpers of the dashboard tests: a live cluster on 127.0.0.1, people with their own
tokens, and a real headless Chromium (Debian's ``chromium`` through ``chromedriver``).

A module of its own rather than a ``conftest.py``: other directories' tests import their conftest
by the bare name ``conftest``, which a second conftest collected in the same run would shadow.
Test modules import the fixtures they use from here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from xce.cluster import LocalCluster
from xce.testing.browser import Browser
from xce.testing.wait import wait_for  # noqa: F401  (tests import it from here)

#: ``admins = []``: the cluster's owner is a plain user here (root is an admin by default), so the
#: tests see what a user sees; the admin token is the admin.
CONFIG = """
cluster_name = "uitest"
default_queue = "normal"
admins = []

[queues.normal]
priority = 30
description = "where the tests' jobs run"

[queues.night]
priority = 10
active = false
"""




class People:
    """Tokens and API calls of named people on one controller: ``admin`` (the admin token), those
    given in ``known``, and on a multi-user controller anyone else (a token is issued on first use)."""

    def __init__(self, url: str, admin_token: str, work: Path, known: dict[str, str] | None = None) -> None:
        self.url = url
        self.work = work
        self.tokens: dict[str, str] = {"admin": admin_token, **(known or {})}

    def token(self, name: str) -> str:
        if name not in self.tokens:
            r = httpx.post(f"{self.url}/v1/admin/tokens", json={"name": name, "role": "user"},
                           headers={"Authorization": f"Bearer {self.tokens['admin']}"}, timeout=30)
            r.raise_for_status()
            self.tokens[name] = r.json()["token"]
        return self.tokens[name]

    def api(self, who: str, method: str, path: str, body: Any = None, **params: Any) -> Any:
        r = httpx.request(method, self.url + path, json=body, params=params or None, timeout=30,
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
    """What ``xce up`` starts: a personal cluster of the user running the tests (two workers)."""
    base = tmp_path_factory.mktemp("ui")
    (base / "xce.toml").write_text(CONFIG)
    c = LocalCluster(base / "state", 2, 2, config=base / "xce.toml", round_interval=0.05, report_interval=0.5)
    c.start()
    yield c
    c.stop()


@pytest.fixture
def people(cluster, tmp_path):
    """``me`` (the cluster's owner, a plain user) and ``admin``."""
    work = tmp_path / "work"
    work.mkdir()
    return People(cluster.url, cluster.token("admin"), work,
                  {"me": (cluster.state_dir / "token").read_text().strip()})


def only_the_controller(b: Browser) -> None:
    assert b.external_requests() == [], "a page requested something from outside the controller"


@pytest.fixture
def browser(cluster):
    """A fresh browser profile per test; fails the test if any page asked anything of another host."""
    b = Browser(cluster.url)
    try:
        yield b
        only_the_controller(b)
    finally:
        b.close()
