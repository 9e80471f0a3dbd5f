"""Tokens, roles and ownership, against a real controller."""

from __future__ import annotations

import stat

import httpx
import pytest

from xce.client import statedir
from xce.controller.auth import tokens

pytestmark = pytest.mark.integration


def test_no_token_or_a_wrong_one_is_401(controller):
    for headers in ({}, {"Authorization": "Bearer nonsense"}, {"Authorization": "Basic abc"},
                    {"Authorization": "Bearer " + tokens.new_token()[2]},
                    {"Authorization": "Bearer xce1_YWRtaW46YWRtaW4.aGVsbG8"}):
        for method, path in (("GET", "/v1/jobs"), ("POST", "/v1/jobs"), ("GET", "/v1/sched/events"),
                             ("POST", "/v1/workers/register"), ("GET", "/metrics")):
            r = httpx.request(method, controller.url + path, headers=headers, json={})
            assert r.status_code == 401, (headers, path, r.text)
    r = httpx.get(controller.url + "/v1/jobs")
    assert r.headers["www-authenticate"] == "Bearer"


def test_a_user_may_act_only_on_their_own_jobs(api):
    jobid = api("owner").post("/v1/jobs", json={"command": ["true"]}).json()["jobid"]
    intruder = api("intruder")
    for method, path in (("POST", f"/v1/jobs/{jobid}/kill"), ("POST", f"/v1/jobs/{jobid}/suspend"),
                         ("POST", f"/v1/jobs/{jobid}/resume"), ("GET", f"/v1/jobs/{jobid}")):
        r = intruder.request(method, path)
        assert r.status_code == 403, (path, r.text)
        assert "belongs to owner" in r.json()["detail"]
    assert intruder.patch(f"/v1/jobs/{jobid}", json={"priority": 100}).status_code == 403
    assert api("owner").get(f"/v1/jobs/{jobid}").json()["state"] == "PEND"
    # an admin may act on everybody's jobs
    assert api("admin").post(f"/v1/jobs/{jobid}/kill").json()["reason"] == "killed by admin"


def test_the_owner_comes_from_the_token(api):
    r = api("honest").post("/v1/jobs", json={"command": ["true"]})
    assert r.json()["user"] == "honest"


def test_a_user_token_cannot_call_worker_scheduler_or_admin_endpoints(api):
    c = api("plain")
    for method, path, body in (
        ("GET", "/v1/sched/state", None), ("GET", "/v1/sched/events", None), ("GET", "/v1/sched/control", None),
        ("POST", "/v1/sched/decisions", {"decisions": []}),
        ("POST", "/v1/workers/register", {"name": "h9"}), ("POST", "/v1/workers/h9/load", {"load": {}}),
        ("GET", "/v1/workers/h9/actions", None), ("POST", "/v1/workers/h9/jobs/1/status", {"status": "usage"}),
        ("POST", "/v1/admin/users", {"name": "x"}), ("POST", "/v1/admin/reconfig", None),
    ):
        r = c.request(method, path, json=body)
        assert r.status_code == 403, (path, r.text)
        assert "a user token cannot call this endpoint" in r.json()["detail"]


def test_service_roles_are_confined(api):
    assert api("worker").get("/v1/sched/events").status_code == 403
    assert api("scheduler").post("/v1/workers/register", json={"name": "hx"}).status_code == 403
    assert api("worker").post("/v1/jobs", json={"command": ["true"]}).status_code == 403
    assert api("scheduler").post("/v1/jobs", json={"command": ["true"]}).status_code == 403


def test_a_host_token_speaks_only_for_its_host(api, controller):
    issued = api("admin").post("/v1/admin/tokens", json={"name": "hsec1", "role": "worker"})
    assert issued.status_code == 201, issued.text
    h = httpx.Client(base_url=controller.url, headers={"Authorization": "Bearer " + issued.json()["token"]})
    assert h.post("/v1/workers/register", json={"name": "hsec1"}).status_code == 200
    r = h.post("/v1/workers/register", json={"name": "hsec2"})
    assert r.status_code == 403 and "cannot act for worker 'hsec2'" in r.json()["detail"]


def test_state_dir_files_are_private(controller):
    sd = controller.state_dir
    for path in (statedir.token_path(sd, r) for r in ("admin", "worker", "scheduler")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((sd / "tokens").stat().st_mode) == 0o700


def test_tokens_parse_and_refuse_forgeries(api, controller):
    token_id, digest, text = tokens.new_token()
    assert tokens.parse(text) == (token_id, text.rsplit(".", 1)[1]) and digest == tokens.digest(text.rsplit(".", 1)[1])
    for bad in (text[:-1], text + "x", text.replace("xce2_", "xce3_"), "xce2_." + "a" * 43, ""):
        assert tokens.parse(bad) is None
    # the right id with another secret is refused like any forgery
    real = api.token_for("forgery-target")
    forged = real.rsplit(".", 1)[0] + "." + tokens.new_token()[2].rsplit(".", 1)[1]
    r = httpx.get(controller.url + "/v1/whoami", headers={"Authorization": f"Bearer {forged}"})
    assert r.status_code == 401 and r.json()["detail"] == "invalid token"
    with pytest.raises(ValueError, match="unknown role"):
        tokens.check_name("root", "ann")


def test_admins_listed_in_the_config_get_admin_rights(api):
    r = api("admin").post("/v1/admin/users", json={"name": "root"})
    root = httpx.Client(base_url=api.ctl.url, headers={"Authorization": f"Bearer {r.json()['token']}"})
    assert root.get("/v1/whoami").json() == {"role": "admin", "name": "root", "cluster": "testcluster"}
    assert root.post("/v1/admin/reconfig").status_code == 200


def test_oversized_bodies_are_refused_before_parsing(api):
    r = api("big").post("/v1/jobs", content=b"{" + b" " * (9 * 1024 * 1024) + b"}",
                        headers={"Content-Type": "application/json"})
    assert r.status_code == 413
