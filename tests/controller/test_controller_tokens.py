"""Issued tokens on SQLite and PostgreSQL: stored hashed, revocable at once, service tokens rotate."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa
from controller_harness import Api, write_config

from xce.client import statedir
from xce.client.launch import start_controller
from xce.controller.store import engine as store_engine

pytestmark = pytest.mark.integration


def _rows(db_url, state_dir) -> list[dict]:
    engine = sa.create_engine(store_engine.normalize_url(db_url, statedir.sqlite_path(state_dir)))
    try:
        with engine.connect() as c:
            return [dict(r) for r in c.execute(sa.text("select * from api_tokens")).mappings()]
    finally:
        engine.dispose()


def test_tokens_are_stored_hashed_revoked_at_once_and_service_tokens_rotate(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, config=str(write_config(tmp_path)))
    try:
        api = Api(ctl)
        admin = api("admin")
        made = admin.post("/v1/admin/tokens", json={"name": "tann", "note": "laptop"}).json()
        text = made["token"]
        assert made["status"] == "active" and made["expires"] is None and made["note"] == "laptop"
        ann = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {text}"})
        assert ann.get("/v1/whoami").json()["name"] == "tann"
        rows = _rows(db_url, tmp_path)
        assert {r["role"] for r in rows} >= {"admin", "worker", "scheduler", "user"}
        flat = repr(rows)
        assert text not in flat and text.rsplit(".", 1)[1] not in flat  # only a hash of the secret is kept
        listed = admin.get("/v1/admin/tokens").json()["tokens"]
        assert made["id"] in {t["id"] for t in listed} and all("token" not in t for t in listed)
        r = admin.post(f"/v1/admin/tokens/{made['id']}/revoke")
        assert r.status_code == 200 and r.json()["status"] == "revoked"
        assert ann.get("/v1/whoami").status_code == 401
        assert made["id"] not in {t["id"] for t in admin.get("/v1/admin/tokens").json()["tokens"]}
        assert made["id"] in {t["id"] for t in admin.get("/v1/admin/tokens", params={"all": "true"}).json()["tokens"]}
        assert admin.post("/v1/admin/tokens/0000000000000000/revoke").status_code == 404
        # revoke the service worker token: the next start issues a new one and the old stays dead
        worker_id = statedir.token_path(tmp_path, "worker").read_text().split("_", 1)[1].split(".")[0]
        old_worker = ctl.token("worker")
        admin_token = ctl.token("admin")
        assert admin.post(f"/v1/admin/tokens/{worker_id}/revoke").status_code == 200
        api.close()
    finally:
        ctl.stop()
    again = start_controller(tmp_path, db=db_url, config=str(write_config(tmp_path)))
    try:
        assert again.token("admin") == admin_token  # still valid: kept
        assert again.token("worker") != old_worker
        h = {"Authorization": f"Bearer {again.token('worker')}"}
        assert httpx.post(again.url + "/v1/workers/register", json={"name": "tk1"}, headers=h).status_code == 200
        h = {"Authorization": f"Bearer {old_worker}"}
        assert httpx.post(again.url + "/v1/workers/register", json={"name": "tk1"}, headers=h).status_code == 401
        assert httpx.get(again.url + "/v1/whoami", headers={"Authorization": f"Bearer {text}"}).status_code == 401
    finally:
        again.stop()


def test_privacy_of_other_users_jobs(tmp_path):
    ctl = start_controller(tmp_path, config=str(write_config(tmp_path)))
    try:
        api = Api(ctl)
        secret_job = {"command": ["train", "--password", "hunter2"], "cwd": "/home/pann/private",
                      "stdout": "/home/pann/out", "stderr": "/home/pann/err", "env": {"API_KEY": "k"}}
        jobid = api("pann").post("/v1/jobs", json=secret_job).json()["jobid"]
        (seen,) = [j for j in api("pbob").get("/v1/jobs", params={"user": "all"}).json()["jobs"] if j["jobid"] == jobid]
        assert seen["command"] is None and seen["user"] == "pann" and seen["state"] == "PEND"
        assert "hunter2" not in api("pbob").get("/v1/jobs", params={"id": jobid}).text
        assert api("pbob").get(f"/v1/jobs/{jobid}").status_code == 403
        assert api("pann").get(f"/v1/jobs/{jobid}").json()["env"] == {"API_KEY": "k"}
        full = api("admin").get(f"/v1/jobs/{jobid}").json()
        assert full["command"] == secret_job["command"] and full["env"] == {"API_KEY": "k"}
        # a site that shows everyone's jobs still never shows someone else's environment
        cfg = write_config(tmp_path, (tmp_path / "xce.toml").read_text() + "\n[privacy]\nshow_all_jobs = true\n")
        assert api("admin").post("/v1/admin/reconfig").status_code == 200, cfg
        detail = api("pbob").get(f"/v1/jobs/{jobid}").json()
        assert detail["command"] == secret_job["command"] and detail["cwd"] == "/home/pann/private"
        assert detail["env"] is None
        assert api("pbob").post(f"/v1/jobs/{jobid}/kill").status_code == 403  # seeing is not acting
        api.close()
    finally:
        ctl.stop()
