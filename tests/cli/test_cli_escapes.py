"""Another user's text on my terminal: commands and job types carrying terminal escapes
are shown as visible escapes (``\\x1b``) by ``xce jobs -u all``, ``xce jobs -l`` and ``xce drift``,
never sent raw (which would retitle the terminal, hide lines or fake output)."""

from __future__ import annotations

import uuid

import httpx

ESC = "\x1b]0;owned\x07\x1b[2J\u202e"
HOST = "hescapes"


def _client(controller, token: str) -> httpx.Client:
    return httpx.Client(base_url=controller.url, timeout=30, headers={"Authorization": f"Bearer {token}"})


def _user_token(controller, name: str) -> str:
    r = httpx.post(f"{controller.url}/v1/admin/users", json={"name": name},
                   headers={"Authorization": f"Bearer {controller.token('admin')}"})
    r.raise_for_status()
    return r.json()["token"]


def test_other_users_escapes_are_shown_not_obeyed(controller, cli):
    with _client(controller, _user_token(controller, "mallory")) as mallory, \
            _client(controller, controller.token("worker")) as worker, \
            _client(controller, controller.token("scheduler")) as sched:
        r = worker.post("/v1/workers/register", json={"name": HOST, "resources": {"slots": 8}, "load": {}})
        assert r.status_code == 200, r.text
        r = mallory.post("/v1/jobs", json={"command": ["echo", f"hi{ESC}"],
                                           "job_type": f"t{ESC}"})
        assert r.status_code == 201, r.text
        jobid = r.json()["jobid"]
        body = {"decisions": [{"id": uuid.uuid4().hex, "ts": 1, "decision": {
            "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [[HOST, 1]]}}]}
        assert sched.post("/v1/sched/decisions", json=body).status_code == 200
        worker.post(f"/v1/workers/{HOST}/load", json={"load": {}, "usage": {str(jobid): {"memory_rss": 1 << 20}}})
        r = worker.post(f"/v1/workers/{HOST}/jobs/{jobid}/status", json={"status": "finished", "exit_code": 0})
        assert r.status_code == 200, r.text

    for args in (("jobs", "-u", "all", "-a"), ("jobs", "-l", str(jobid)), ("drift", "--min-samples", "5")):
        res = cli.xce(*args)
        assert res.code == 0, res.err
        assert "\x1b" not in res.out and "\x07" not in res.out and "\u202e" not in res.out, (args, res.out)
        assert "\\x1b" in res.out, (args, res.out)  # shown, so the user sees something odd is there
