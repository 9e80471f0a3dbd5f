"""Hostile values on SQLite and PostgreSQL alike: never a 500, and the controller keeps serving."""

from __future__ import annotations

import httpx
import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

BIG = 2**63


@pytest.fixture
def hostile(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, config=str(write_config(tmp_path)))
    api = Api(ctl)
    try:
        yield api
    finally:
        api.close()
        ctl.stop()


def still_serving(api: Api) -> None:
    r = api("hsuser").post("/v1/jobs", json={"command": ["true"]})
    assert r.status_code == 201, r.text
    assert api("hsuser").get(f"/v1/jobs/{r.json()['jobid']}").status_code == 200


def test_ids_outside_64_bits_and_below_one(hostile):
    api = hostile
    user = api("hsuser")
    for jobid in (BIG, 2**64, -1, 0, 10**30):
        for method, path in (("GET", f"/v1/jobs/{jobid}"), ("POST", f"/v1/jobs/{jobid}/kill"),
                             ("POST", f"/v1/jobs/{jobid}/suspend"), ("POST", f"/v1/jobs/{jobid}/resume")):
            r = user.request(method, path)
            assert r.status_code == 422, (path, r.status_code, r.text)
        assert user.patch(f"/v1/jobs/{jobid}", json={"priority": 1}).status_code == 422
        assert user.get("/v1/jobs", params={"id": jobid}).status_code == 422
        still_serving(api)
    assert user.get(f"/v1/jobs/{BIG - 1}").status_code == 404
    for who, path in (("scheduler", "/v1/sched/events"), ("scheduler", "/v1/sched/control"),
                      ("worker", "/v1/workers/hh1/actions")):
        assert api(who).get(path, params={"after": BIG}).status_code == 422, path
    w = api("worker")
    assert w.post("/v1/workers/register", json={"name": "hh1", "running": [BIG]}).status_code == 422
    assert w.post("/v1/workers/register", json={"name": "hh1"}).status_code == 200
    assert w.post(f"/v1/workers/hh1/jobs/{BIG}/status", json={"status": "usage"}).status_code == 422
    assert w.post("/v1/workers/hh1/jobs/1/status", json={"status": "finished", "exit_code": 2**40}).status_code == 422
    r = api("scheduler").post("/v1/sched/decisions", json={"decisions": [
        {"id": "hx-1", "ts": 1, "decision": {"op": "DISPATCH", "seq": 1, "jobid": BIG, "placement": [["hh1", 1]]}}]})
    assert r.status_code < 500, r.text
    still_serving(api)


def test_nul_characters_anywhere_are_422(hostile):
    api = hostile
    user = api("hsuser")
    for field, value in (("queue", "nor\0mal"), ("project", "d\0"), ("job_type", "t\0"), ("request", "select[\0]"),
                         ("cwd", "/tmp/\0x"), ("stdout", "o\0"), ("stderr", "e\0"), ("env", {"A": "x\0"}),
                         ("env", {"A\0": "x"}), ("command", ["echo", "a\0b"])):
        body = {"command": ["true"], field: value}
        r = user.post("/v1/jobs", json=body)
        assert r.status_code == 422, (field, r.status_code, r.text)
        assert r.json()["detail"][0]["loc"][:2] == ["body", field], r.text
        still_serving(api)
    for path in ("/v1/hosts/a%00b", "/v1/jobs?user=a%00b", "/v1/jobs?queue=%00", "/v1/jobs?state=RUN%00"):
        r = user.get(path)
        assert r.status_code == 422, (path, r.status_code, r.text)
    w = api("worker")
    assert w.post("/v1/workers/register", json={"name": "h\0"}).status_code == 422
    assert w.post("/v1/workers/register", json={"name": "hh2"}).status_code == 200
    assert w.post("/v1/workers/hh2/jobs/1/status", json={"status": "usage", "reason": "\0"}).status_code == 422
    assert w.post("/v1/workers/hh2/load", json={"load": {"r1m\0": 1}}).status_code == 422
    assert w.get("/v1/workers/hh%002/actions").status_code == 422
    admin = api("admin")
    assert admin.post("/v1/admin/tokens", json={"name": "a\0b"}).status_code == 422
    assert admin.post("/v1/admin/tokens/ab%00/revoke").status_code == 422
    # the text "\u0000" (a backslash, then "u0000") is not a NUL: accepted as written
    r = user.post("/v1/jobs", json={"command": ["echo", "\\u0000"]})
    assert r.status_code == 201 and user.get(f"/v1/jobs/{r.json()['jobid']}").json()["command"] == ["echo", "\\u0000"]
    still_serving(api)


def test_user_names_must_be_unix_user_names(hostile):
    admin = hostile("admin")
    for bad in ("-rf", "a b", "ann:x", "../etc", "9lives", "x" * 33, "an\u00efs"):
        r = admin.post("/v1/admin/tokens", json={"name": bad})
        assert r.status_code == 422 and "Unix user name" in r.text, (bad, r.text)
    for good in ("ann", "_svc", "bob.smith", "ws01$", "Mixed-Case_1"):
        assert admin.post("/v1/admin/tokens", json={"name": good}).status_code == 201, good
    assert admin.post("/v1/admin/tokens", json={"name": "node-07.rack3", "role": "worker"}).status_code == 201
    assert admin.post("/v1/admin/tokens", json={"name": "bad host!", "role": "worker"}).status_code == 422


def test_malformed_requests_never_reach_500(hostile):
    raw = httpx.Client(base_url=hostile.ctl.url, timeout=30,
                       headers={"Authorization": f"Bearer {hostile.token_for('hsuser')}"})
    for content in (b"\0", b'{"command": ["true"', b"[]", b"null", b'{"command": "true"}', b"\xff\xfe"):
        r = raw.post("/v1/jobs", content=content, headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (content, r.status_code, r.text)
    still_serving(hostile)
