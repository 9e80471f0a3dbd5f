"""The controller process: port 0 and controller.json, clean stop, restart keeps its identity."""

from __future__ import annotations

import json
import signal

import httpx
import pytest
from controller_harness import pg_engine

from xce.client import statedir
from xce.client.launch import start_controller

pytestmark = pytest.mark.integration


def test_port_zero_publishes_the_real_address_and_a_clean_stop_removes_it(tmp_path):
    ctl = start_controller(tmp_path)
    try:
        info = json.loads((tmp_path / "controller.json").read_text())
        assert info["pid"] == ctl.pid and info["url"] == ctl.url
        assert info["url"].startswith("http://127.0.0.1:") and not info["url"].endswith(":0")
        admin_token = ctl.token("admin")
        r = httpx.get(ctl.url + "/v1/whoami", headers={"Authorization": f"Bearer {admin_token}"})
        assert r.json() == {"role": "admin", "name": "admin", "cluster": "xce"}
    finally:
        ctl.proc.send_signal(signal.SIGTERM)
        assert ctl.proc.wait(15) == 0
    assert statedir.read_info(tmp_path) is None

    again = start_controller(tmp_path)
    try:
        assert again.token("admin") == admin_token  # the secret (and so every token) survives restarts
        r = httpx.get(again.url + "/v1/whoami", headers={"Authorization": f"Bearer {admin_token}"})
        assert r.status_code == 200
    finally:
        again.stop()


def test_postgresql_url_forms_are_accepted(tmp_path, pg_url):
    plain = pg_url.replace("postgresql+psycopg://", "postgresql://")
    ctl = start_controller(tmp_path, db=plain)
    try:
        c = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.user_token()}"})
        assert c.post("/v1/jobs", json={"command": ["true"]}).status_code == 201
    finally:
        ctl.stop()
    schema = pg_url.rsplit("%3D", 1)[1]
    with pg_engine().connect() as conn:
        assert conn.exec_driver_sql(f'select count(*) from "{schema}".jobs').scalar() == 1


def test_an_unreachable_database_is_a_clear_startup_error(tmp_path):
    from xce.client.launch import LaunchError

    with pytest.raises(LaunchError, match="cannot use the database"):
        start_controller(tmp_path, db="postgresql://postgres@127.0.0.1:9/none", timeout=30)
