"""Input that once reached the store raw: half a surrogate pair in a submission (500 on both stores),
and a worker token registering any host name (markup, escapes) with 10^30 slots."""

from __future__ import annotations

import httpx

from xce.client.launch import start_controller


def test_lone_surrogate_is_a_422_naming_the_field(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url)
    try:
        with httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}",
                                                     "Content-Type": "application/json"}) as c:
            r = c.post("/v1/jobs", content=b'{"command": ["echo", "a\\ud800b"]}')
            assert r.status_code == 422, r.text
            assert r.json()["detail"][0]["loc"] == ["body", "command", 1]
            assert "surrogate" in r.json()["detail"][0]["msg"]
            # A whole pair is one character, and fine.
            r = c.post("/v1/jobs", content=b'{"command": ["echo", "\\ud83d\\ude00"]}')
            assert r.status_code == 201, r.text
            assert c.get(f"/v1/jobs/{r.json()['jobid']}").json()["command"] == ["echo", "\U0001F600"]
    finally:
        ctl.stop()


def test_worker_registration_refuses_bad_host_names_and_absurd_slots(api):
    worker = api("worker")
    for name in ("<b>x</b>", "h\x1b[2J", "-dash", "a" * 129, "sp ace"):
        r = worker.post("/v1/workers/register", json={"name": name, "resources": {"slots": 2}})
        assert r.status_code == 422, (name, r.text)
        assert r.json()["detail"][0]["loc"] == ["body", "name"], r.text
    r = worker.post("/v1/workers/register", json={"name": "hbig", "resources": {"slots": 10**30}})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "resources", "slots"]
    assert api("admin").get("/v1/hosts").json()["hosts"] == [] or \
        "hbig" not in {h["name"] for h in api("admin").get("/v1/hosts").json()["hosts"]}
    r = worker.post("/v1/workers/register", json={"name": "h-ok.example_1", "resources": {"slots": 1_000_000}})
    assert r.status_code == 200, r.text
