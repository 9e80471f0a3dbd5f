"""``GET /v1/acct`` against a real controller (SQLite and PostgreSQL), driven through the worker and
scheduler protocols: per-job figures agree with each job's own history, the totals with the jobs,
the filters and the window select what they say, the privacy rule holds, and retention deletes
finished jobs (never unfinished ones)."""

from __future__ import annotations

import time
import uuid

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

M = 1024**2
HOST = "hacct"
CONFIG = """
default_queue = "normal"
[queues.normal]
[queues.short]
[projects.default]
[projects.chem]
"""


class Cluster:
    """A scheduler and a worker played by the test."""

    def __init__(self, api: Api) -> None:
        self.api = api
        r = api("worker").post("/v1/workers/register", json={"name": HOST, "resources": {"slots": 64}, "load": {}})
        assert r.status_code == 200, r.text

    def submit(self, who: str, **body) -> int:
        body.setdefault("command", ["./work", who])
        r = self.api(who).post("/v1/jobs", json=body)
        assert r.status_code == 201, r.text
        return r.json()["jobid"]

    def start(self, jobid: int, tasks: int = 1) -> None:
        body = {"decisions": [{"id": uuid.uuid4().hex, "ts": 1, "decision": {
            "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [[HOST, tasks]]}}]}
        r = self.api("scheduler").post("/v1/sched/decisions", json=body)
        assert r.status_code == 200 and r.json()["results"][0]["status"] == "applied", r.text

    def usage(self, jobid: int, **tick) -> None:
        r = self.api("worker").post(f"/v1/workers/{HOST}/load", json={"load": {}, "usage": {str(jobid): tick}})
        assert r.status_code == 200, r.text

    def finish(self, jobid: int, code: int) -> None:
        r = self.api("worker").post(f"/v1/workers/{HOST}/jobs/{jobid}/status",
                                    json={"status": "finished", "exit_code": code})
        assert r.status_code == 200, r.text

    def acct(self, who: str, **params) -> dict:
        r = self.api(who).get("/v1/acct", params=params)
        assert r.status_code == 200, r.text
        return r.json()

    def history(self, jobid: int) -> dict[str, int]:
        """state -> when the job entered it, from the job's own history."""
        r = self.api("admin").get(f"/v1/jobs/{jobid}")
        return {h["to"]: h["ts"] for h in r.json()["history"]}


def test_acct_figures_filters_window_and_privacy(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, config=str(write_config(tmp_path, CONFIG)),
                           extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        c = Cluster(api)
        t0 = time.time_ns()
        ok = c.submit("ann", tasks=2, project="chem")
        failed = c.submit("ann", queue="short")
        never = c.submit("ann")
        bobs = c.submit("bob")
        still = c.submit("ann")  # stays pending: not in any accounting
        time.sleep(1.1)
        for j, tasks in ((ok, 2), (failed, 1), (bobs, 1)):
            c.start(j, tasks)
        c.usage(ok, memory_rss=300 * M, cpu_ms=4000)
        c.usage(ok, memory_rss=200 * M, cpu_ms=7000)
        c.usage(failed, memory_rss=10 * M, cpu_ms=1000)
        time.sleep(1.1)
        c.finish(ok, 0)
        c.finish(failed, 3)
        c.finish(bobs, 0)
        r = api("ann").post(f"/v1/jobs/{never}/kill", json={})
        assert r.status_code in (200, 202), r.text

        rep = c.acct("ann")
        by_id = {j["jobid"]: j for j in rep["jobs"]}
        assert sorted(by_id) == sorted([ok, failed, never]) and still not in by_id
        for jobid, j in by_id.items():
            h = c.history(jobid)
            end = h.get("DONE") or h["EXIT"]
            started = h.get("RUN")
            assert abs(j["wait_s"] - ((started or end) - h["PEND"]) / 1e9) < 1.0, (j, h)
            assert abs(j["run_s"] - ((end - started) / 1e9 if started else 0)) < 1.0, (j, h)
        assert by_id[ok]["wait_s"] >= 1.0 and by_id[ok]["run_s"] >= 1.0
        assert (by_id[ok]["state"], by_id[ok]["exit_code"], by_id[ok]["mem_peak"], by_id[ok]["cpu_s"]) == \
            ("DONE", 0, 300 * M, 7)
        assert (by_id[failed]["state"], by_id[failed]["exit_code"], by_id[failed]["queue"]) == ("EXIT", 3, "short")
        assert (by_id[never]["state"], by_id[never]["run_s"], by_id[never]["cpu_s"]) == ("EXIT", 0, None)
        assert by_id[ok]["project"] == "chem" and by_id[ok]["command"] == ["./work", "ann"]
        t = rep["totals"]
        assert (t["jobs"], t["done"], t["exit"]) == (3, 1, 2)
        slot_s = sum(j["run_s"] * j["tasks"] for j in rep["jobs"])
        assert t["slot_hours"] == pytest.approx(slot_s / 3600, abs=1e-4)
        assert t["mean_wait_s"] == pytest.approx(sum(j["wait_s"] for j in rep["jobs"]) / 3, abs=1e-3)

        # filters
        assert [j["jobid"] for j in c.acct("ann", queue="short")["jobs"]] == [failed]
        assert [j["jobid"] for j in c.acct("ann", project="chem")["jobs"]] == [ok]
        # everyone's jobs: bob's command is his own business; an admin sees it
        everyone = {j["jobid"]: j for j in c.acct("ann", user="all")["jobs"]}
        assert bobs in everyone and everyone[bobs]["command"] is None and everyone[bobs]["user"] == "bob"
        assert {j["jobid"]: j for j in c.acct("admin", user="all")["jobs"]}[bobs]["command"] == ["./work", "bob"]
        assert [j["jobid"] for j in c.acct("ann", user="bob")["jobs"]] == [bobs]
        # the window is on the end time
        assert c.acct("ann", since=time.time_ns())["totals"]["jobs"] == 0
        assert c.acct("ann", since=t0, until=t0 + 1)["jobs"] == []
        r = api("ann").get("/v1/acct", params={"since": 10, "until": 5})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "until"]
    finally:
        api.close()
        ctl.stop()


def test_retention_deletes_finished_jobs_only(tmp_path):
    config = CONFIG + "\n[accounting]\nretention_days = 0.00003\n"  # about 2.6 s
    ctl = start_controller(tmp_path, config=str(write_config(tmp_path, config)), extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        c = Cluster(api)
        done = c.submit("cy")
        running = c.submit("cy")
        pending = c.submit("cy")
        c.start(done)
        c.start(running)
        c.finish(done, 0)
        assert [j["jobid"] for j in c.acct("cy")["jobs"]] == [done]
        deadline = time.monotonic() + 30
        while api("cy").get(f"/v1/jobs/{done}").status_code != 404:
            assert time.monotonic() < deadline, "the finished job outlived its retention"
            time.sleep(0.5)
        assert c.acct("cy")["jobs"] == []
        states = {j["jobid"]: j["state"] for j in api("cy").get("/v1/jobs").json()["jobs"]}
        assert states == {running: "RUN", pending: "PEND"}
    finally:
        api.close()
        ctl.stop()


def test_a_spooled_script_goes_with_the_last_job_that_runs_it(tmp_path):
    import sqlalchemy as sa

    from xce.client import statedir

    config = CONFIG + "\n[accounting]\nretention_days = 0.00003\n"  # about 2.6 s
    ctl = start_controller(tmp_path, config=str(write_config(tmp_path, config)), extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    engine = sa.create_engine(f"sqlite:///{statedir.sqlite_path(tmp_path)}")
    try:
        c = Cluster(api)
        single = c.submit("cy", command=["job.sh"], script="#!/bin/sh\necho single\n")
        first, second = api("cy").post("/v1/jobs", json={"command": ["array.sh"], "script": "#!/bin/sh\necho a\n",
                                                         "array": 2}).json()["jobids"]
        for jobid in (single, first):
            c.start(jobid)
            c.finish(jobid, 0)
        deadline = time.monotonic() + 30
        while api("cy").get(f"/v1/jobs/{first}").status_code != 404:
            assert time.monotonic() < deadline, "the finished jobs outlived their retention"
            time.sleep(0.5)
        with engine.connect() as conn:
            kept = conn.execute(sa.text("SELECT script FROM job_scripts")).scalars().all()
        assert kept == ["#!/bin/sh\necho a\n"]  # the array's second element has yet to run it
        c.start(second)
        actions = api("worker").get(f"/v1/workers/{HOST}/actions", params={"after": 0}).json()["actions"]
        start = [a for a in actions if a["kind"] == "start" and a["jobid"] == second]
        assert start and start[0]["job"]["script"] == "#!/bin/sh\necho a\n"
        assert start[0]["job"]["command"] == ["array.sh"] and start[0]["job"]["array"] == [1, 2, 2]
    finally:
        engine.dispose()
        api.close()
        ctl.stop()
