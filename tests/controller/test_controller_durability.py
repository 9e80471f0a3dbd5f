"""A controller killed with SIGKILL resumes exactly where it stopped, on SQLite and on PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from xce.client.launch import start_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N = 500


def read_feed(client: httpx.Client, after: int, limit: int = 1000, pages: int | None = None) -> tuple[list, int]:
    got: list[dict] = []
    n = 0
    while pages is None or n < pages:
        page = client.get("/v1/sched/events", params={"after": after, "limit": limit}).json()
        n += 1
        if not page["events"]:
            break
        got += page["events"]
        after = page["last_seq"]
    return got, after


def test_kill9_and_restart_loses_nothing(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url)
    try:
        admin = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"})
        sched = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.token('scheduler')}"})
        cursor = sched.get("/v1/sched/state").json()["seq"]
        ids = []
        for i in range(N):
            r = admin.post("/v1/jobs", json={"command": ["sleep", str(i)], "priority": i % 7})
            assert r.status_code == 201
            ids.append(r.json()["jobid"])
        killed = ids[::10]
        for jobid in killed:
            assert admin.post(f"/v1/jobs/{jobid}/kill").status_code == 200
        # the scheduler has read part of the feed when the controller dies
        before, cursor = read_feed(sched, cursor, limit=100, pages=3)
        assert len(before) == 300
        ctl.kill9()
        admin.close()
        sched.close()

        ctl = start_controller(tmp_path, db=db_url)
        admin = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"})
        sched = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.token('scheduler')}"})

        jobs = admin.get("/v1/jobs", params={"all": True, "user": "all"}).json()["jobs"]
        assert [j["jobid"] for j in jobs] == ids
        states = {j["jobid"]: j["state"] for j in jobs}
        assert states == {jobid: ("EXIT" if jobid in killed else "PEND") for jobid in ids}
        assert all(j["command"] == ["sleep", str(i)] for i, j in enumerate(jobs))

        after, _ = read_feed(sched, cursor)
        feed = before + after
        seqs = [e["seq"] for e in feed]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, no duplicate, in order
        pushed = [j["jobid"] for e in feed if e["event"]["type"] == "JOBS_PUSH" for j in e["event"]["payload"]["jobs"]]
        assert pushed == ids
        exits = [e["event"]["payload"]["jobid"] for e in feed if e["event"]["type"] == "JOB_STATE_CHANGE"]
        assert exits == killed

        # new work continues the numbering and the feed
        r = admin.post("/v1/jobs", json={"command": ["true"]})
        assert r.json()["jobid"] == ids[-1] + 1
        nxt = sched.get("/v1/sched/events", params={"after": seqs[-1]}).json()["events"]
        assert [e["seq"] for e in nxt] == [seqs[-1] + 1]
        assert nxt[0]["event"]["payload"]["jobs"][0]["jobid"] == ids[-1] + 1

        # the (re)starting scheduler's full sync shows exactly the unfinished jobs
        state = sched.get("/v1/sched/state").json()
        synced = [j["jobid"] for e in state["events"] if e["type"] == "JOBS_PUSH" for j in e["payload"]["jobs"]]
        assert synced == [j for j in ids if j not in killed] + [ids[-1] + 1]
        assert state["seq"] == seqs[-1] + 1
        admin.close()
        sched.close()
    finally:
        ctl.stop()
