"""Helpers shared by the controller tests (imported by conftest.py and by modules needing their own controller)."""

from __future__ import annotations

from pathlib import Path

import httpx
from pgschema import PG_SERVER, pg_engine  # noqa: F401 - re-exported for the controller tests

from xce.client.launch import ControllerProcess

CONFIG = """
cluster_name = "testcluster"
default_queue = "normal"

[queues.normal]
priority = 30

[queues.high]
priority = 50
preemptible_queues = ["normal"]

[queues.closed]
status = "closed"

[projects.default]
[projects.physics]
priority = 5

[hosts.h2]
slots = 2
"""


def write_config(directory: Path, text: str = CONFIG) -> Path:
    path = directory / "xce.toml"
    path.write_text(text)
    return path


class Api:
    """httpx against a running controller, one client per role/user."""

    def __init__(self, ctl: ControllerProcess) -> None:
        self.ctl = ctl
        self._clients: dict[str, httpx.Client] = {}

    def token_for(self, who: str) -> str:
        if who in ("admin", "worker", "scheduler"):
            return self.ctl.token(who)
        return self.ctl.user_token(who)

    def __call__(self, who: str = "alice") -> httpx.Client:
        if who not in self._clients:
            self._clients[who] = httpx.Client(base_url=self.ctl.url, timeout=30,
                                              headers={"Authorization": f"Bearer {self.token_for(who)}"})
        return self._clients[who]

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
