"""Fixtures for controller tests: real controller processes, real SQLite and PostgreSQL stores."""

from __future__ import annotations

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request):
    """None (the state directory's SQLite file) or a PostgreSQL URL: store tests run on both."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    """One controller (SQLite) shared by a test module; tests use distinct users/hosts to stay independent."""
    sd = tmp_path_factory.mktemp("state")
    # Hosts registered by one test stay silent afterwards; a long timeout keeps them (and their jobs)
    # from being given up halfway through the module. Liveness has its own tests and controller.
    ctl = start_controller(sd, config=str(write_config(sd)), extra_args=("--worker-timeout", "600"))
    yield ctl
    ctl.stop()


@pytest.fixture(scope="module")
def api(controller):
    a = Api(controller)
    yield a
    a.close()
