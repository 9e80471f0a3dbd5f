"""Helpers shared by the controller tests (imported by conftest.py and by modules needing their own controller)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from xce.controller.launch import ControllerProcess

PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

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


def pg_engine() -> sa.engine.Engine:
    engine = sa.create_engine(PG_SERVER)
    try:
        with engine.connect() as c:
            c.exec_driver_sql("select 1")
    except Exception as exc:  # the message must say what is missing, not just that something failed
        pytest.fail(f"PostgreSQL is required for the store tests at 127.0.0.1:5432 (trust auth, database 'test', "
                    f"user 'postgres'); it is not reachable: {exc}", pytrace=False)
    return engine


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
        r = httpx.post(f"{self.ctl.url}/v1/admin/users", json={"name": who},
                       headers={"Authorization": f"Bearer {self.ctl.token('admin')}"})
        r.raise_for_status()
        return r.json()["token"]

    def __call__(self, who: str = "alice") -> httpx.Client:
        if who not in self._clients:
            self._clients[who] = httpx.Client(base_url=self.ctl.url, timeout=30,
                                              headers={"Authorization": f"Bearer {self.token_for(who)}"})
        return self._clients[who]

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
