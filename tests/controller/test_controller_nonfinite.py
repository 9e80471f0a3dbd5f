"""NaN, Infinity and numbers too large for a float: JSON as Python writes it, but not JSON, and once
a 500 with a traceback (``Out of range float values``) from any user. Each is a 422 naming the field,
on FastAPI's routes and on the fast lane's alike, and the controller keeps serving."""

from __future__ import annotations

import pytest
from controller_harness import Api

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

BAD = (b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1E+400", b"1" * 400 + b".5")


def test_non_finite_numbers_are_422_naming_the_field_on_every_route(tmp_path):
    ctl = start_controller(tmp_path)
    api = Api(ctl)
    try:
        user, worker, sched, admin = api("nfuser"), api("worker"), api("scheduler"), api("admin")
        assert worker.post("/v1/workers/register", json={"name": "nf1", "resources": {"slots": 2}}).status_code == 200
        jobid = user.post("/v1/jobs", json={"command": ["true"]}).json()["jobid"]
        routes = (  # (client, method, path, body with X where the number goes, the field's loc)
            (user, "POST", "/v1/jobs", b'{"command": ["true"], "priority": X}', ["body", "priority"]),
            (user, "POST", "/v1/jobs", b'{"command": ["true"], "env": {"A": [X]}}', ["body", "env", "A", 0]),
            (user, "PATCH", f"/v1/jobs/{jobid}", b'{"priority": X}', ["body", "priority"]),
            (worker, "POST", "/v1/workers/nf1/load", b'{"load": {"r1m": X}}', ["body", "load", "r1m"]),
            (worker, "POST", f"/v1/workers/nf1/jobs/{jobid}/status", b'{"status": "usage", "usage": {"cpu": X}}',
             ["body", "usage", "cpu"]),
            (sched, "POST", "/v1/sched/decisions", b'{"decisions": [{"id": "nf-1", "ts": X, "decision": {}}]}',
             ["body", "decisions", 0, "ts"]),
            (admin, "POST", "/v1/admin/tokens", b'{"name": "nfx", "ttl": X}', ["body", "ttl"]),
        )
        for c, method, path, body, loc in routes:
            for bad in BAD:
                r = c.request(method, path, content=body.replace(b"X", bad),
                              headers={"Content-Type": "application/json"})
                assert r.status_code == 422, (path, bad, r.status_code, r.text)
                (err,) = r.json()["detail"]
                assert err["loc"] == loc, (path, bad, r.text)
                assert "\n" not in err["msg"] and "not a number JSON allows" in err["msg"], err
        # a finite number with an exponent, and the word NaN inside a string, are as they were
        r = user.post("/v1/jobs", content=b'{"command": ["echo", "NaN", "Infinity", "1e999"]}',
                      headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert user.get(f"/v1/jobs/{r.json()['jobid']}").json()["command"] == ["echo", "NaN", "Infinity", "1e999"]
        r = worker.post("/v1/workers/nf1/load", content=b'{"load": {"r1m": 1.5e0}}',
                        headers={"Content-Type": "application/json"})
        assert r.status_code < 300, r.text
    finally:
        api.close()
        ctl.stop()
