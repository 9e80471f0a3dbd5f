"""Fixtures for controller tests: real controller processes, real SQLite and PostgreSQL stores."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from xce.controller.launch import ControllerProcess, start_controller

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


@pytest.fixture
def pg_url():
    """A URL whose search_path is a fresh schema, dropped afterwards: reruns start clean."""
    engine = pg_engine()
    schema = f"xce_t_{uuid.uuid4().hex[:12]}"
    with engine.begin() as c:
        c.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as c:
            c.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request):
    """None (the state directory's SQLite file) or a PostgreSQL URL: store tests run on both."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


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


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    """One controller (SQLite) shared by a test module; tests use distinct users/hosts to stay independent."""
    sd = tmp_path_factory.mktemp("state")
    ctl = start_controller(sd, config=str(write_config(sd)), extra_args=("--worker-timeout", "2"))
    yield ctl
    ctl.stop()


@pytest.fixture(scope="module")
def api(controller):
    a = Api(controller)
    yield a
    a.close()
