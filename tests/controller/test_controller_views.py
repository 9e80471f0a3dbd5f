"""The views of what is shared: ``GET /v1/pools`` / ``xce pools`` (who holds each license pool, who
waits for it) and ``GET /v1/queues/{name}/shares`` / ``xce shares`` (a fair-share queue's standing),
against a real controller driven through the scheduler and worker protocols, and the fair-share
figures against the ``fairshare`` picker itself over one history."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller
from xce.controller.records import fairshare
from xce.testing import Harness, make_host, make_job, queue

pytestmark = pytest.mark.integration

HOST = "hviews"
LIC = "example.com/lic"
CONFIG = f"""
default_queue = "normal"
[queues.normal]
[queues.fair]
job_pick_plugin = "fairshare"
shares = {{ alice = 3, bob = 1 }}
fairshare_half_life = 1000000000
[projects.default]
[shared_resources."{LIC}"]
total = 10
description = "solver licenses"
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sd = tmp_path_factory.mktemp("views")
    ctl = start_controller(sd, config=str(write_config(sd, CONFIG)), extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    r = api("worker").post("/v1/workers/register", json={"name": HOST, "resources": {"slots": 64}, "load": {}})
    assert r.status_code == 200, r.text
    yield api
    api.close()
    ctl.stop()


def submit(api: Api, who: str, **body) -> int:
    body.setdefault("command", ["./work", who])
    r = api(who).post("/v1/jobs", json=body)
    assert r.status_code == 201, r.text
    return r.json()["jobid"]


def start(api: Api, jobid: int, tasks: int = 1) -> None:
    body = {"decisions": [{"id": uuid.uuid4().hex, "ts": 1, "decision": {
        "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [[HOST, tasks]]}}]}
    r = api("scheduler").post("/v1/sched/decisions", json=body)
    assert r.status_code == 200 and r.json()["results"][0]["status"] == "applied", r.text


def finish(api: Api, jobid: int) -> None:
    r = api("worker").post(f"/v1/workers/{HOST}/jobs/{jobid}/status", json={"status": "finished", "exit_code": 0})
    assert r.status_code == 200, r.text


def xce(api: Api, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xce.cli.main", *args, "--url", api.ctl.url,
                           "--token", api.token_for("admin")], capture_output=True, text=True, timeout=60)


def test_pools_show_holders_and_pending_demand(cluster):
    api = cluster
    held = submit(api, "alice", tasks=2, requests={LIC: 2})  # 2 per task: 4 of the pool
    small = submit(api, "bob", requests={LIC: 1})
    waiting = submit(api, "carol", requests={LIC: 3})
    submit(api, "carol")  # no license: not in the view
    start(api, held, tasks=2)
    start(api, small)
    pool, = api("bob").get("/v1/pools").json()["pools"]
    assert (pool["name"], pool["total"], pool["in_use"], pool["free"], pool["pending"]) == (LIC, 10, 5, 5, 3)
    assert [(h["jobid"], h["user"], h["amount"]) for h in pool["holders"]] == [(held, "alice", 4), (small, "bob", 1)]
    assert pool["users"] == [{"user": "alice", "amount": 4}, {"user": "bob", "amount": 1}]
    assert pool["waiting"] == [{"user": "carol", "amount": 3}] and pool["description"] == "solver licenses"

    out = xce(api, "pools", "-l")
    assert out.returncode == 0, out.stderr
    assert LIC in out.stdout and "alice:4 bob:1" in out.stdout and f"job {held} (alice" in out.stdout
    assert "carol waits for 3" in out.stdout
    wrong = xce(api, "pools", "example.com/nope")
    assert wrong.returncode == 1 and wrong.stderr.strip().count("\n") == 0 and "no shared pool named" in wrong.stderr

    finish(api, held)  # an ended job gives its licenses back
    pool, = api("bob").get("/v1/pools").json()["pools"]
    assert (pool["in_use"], pool["free"], pool["pending"]) == (1, 9, 3)
    assert waiting not in [h["jobid"] for h in pool["holders"]]


def test_shares_rank_users_by_the_pickers_factor(cluster):
    api = cluster
    a = submit(api, "alice", queue="fair", tasks=2)
    b = submit(api, "bob", queue="fair")
    submit(api, "dave", queue="fair")  # pending, never ran: no usage, the best factor
    start(api, a, tasks=2)
    start(api, b)
    time.sleep(0.3)
    finish(api, a)
    finish(api, b)
    r = api("dave").get("/v1/queues/fair/shares")
    assert r.status_code == 200, r.text
    res = r.json()

    def ran(jobid: int) -> float:
        hist = {h["to"]: h["ts"] for h in api("admin").get(f"/v1/jobs/{jobid}").json()["history"]}
        return (hist["DONE"] - hist["RUN"]) / 1e9

    owners = {o["name"]: o for o in res["owners"]}
    assert set(owners) == {"alice", "bob", "dave"} and res["by"] == "user"
    # A half-life of 30 years: what ran a moment ago counts whole, slot-seconds of the job's own history.
    assert owners["alice"]["usage"] == pytest.approx(2 * ran(a), rel=1e-6)
    assert owners["bob"]["usage"] == pytest.approx(ran(b), rel=1e-6)
    assert (owners["alice"]["shares"], owners["bob"]["shares"], owners["dave"]["shares"]) == (3, 1, 1)
    total = owners["alice"]["usage"] + owners["bob"]["usage"]
    # Shares among those who used something and those listed: alice 3 of 4, bob 1 of 4.
    assert owners["alice"]["factor"] == pytest.approx(2 ** (-(owners["alice"]["usage"] / total) / 0.75))
    assert owners["bob"]["factor"] == pytest.approx(2 ** (-(owners["bob"]["usage"] / total) / 0.25))
    assert owners["dave"]["factor"] == 1.0 and owners["dave"]["pending"] == 1
    # bob used half of alice's time on a third of her shares: he goes last.
    assert [o["name"] for o in res["owners"]] == ["dave", "alice", "bob"]
    assert [o["rank"] for o in res["owners"]] == [1, 2, 3]

    out = xce(api, "shares")  # every fairshare queue: just "fair"
    assert out.returncode == 0, out.stderr
    lines = [line.split() for line in out.stdout.splitlines()]
    assert out.stdout.startswith("Queue fair: fair share by user")
    assert [w[1] for w in lines if w and w[0].isdigit()] == ["dave", "alice", "bob"]

    assert api("dave").get("/v1/queues/nope/shares").status_code == 404
    refused = api("dave").get("/v1/queues/normal/shares")
    assert refused.status_code == 409 and "not scheduled by fair share" in refused.text
    wrong = xce(api, "shares", "normal")
    assert wrong.returncode == 1 and "not scheduled by fair share" in wrong.stderr


def test_the_views_figures_are_the_fairshare_pickers_own():
    """One history through the scheduling core: the controller's decayed usage and factors match the
    picker's tally (a Riemann sum per round of the view's integral: within 2**(round/half-life))."""
    half_life = 600
    shares = {"alice": 3, "bob": 1}
    h = Harness(queues=[queue("normal", shares=tuple(shares.items()), fairshare_half_life=half_life,
                              reservations=0)], picker="fairshare")
    h.hosts(make_host("h1").slots(4))
    tasks = {1: 2, 2: 1, 3: 1, 4: 1, 5: 3}
    user = {1: "alice", 2: "bob", 3: "carol", 4: "bob", 5: "alice"}
    h.submit(*[make_job(j).user(user[j]).tasks(tasks[j]) for j in tasks])
    started, ended = {}, {}
    for step in range(40):
        for d in h.round_decisions():
            if type(d).__name__ == "Dispatch":
                started[d.jobid] = h.core.jobs[d.jobid].start_time
        for jobid, when in ((1, 5), (2, 12), (3, 20)):
            if step == when:
                h.state(jobid, "DONE")
                ended[jobid] = h.ts
    h.round_decisions()
    now, picker = h.ts, h.core.picker
    assert set(started) == set(tasks)  # every job ran, three of them to their end
    usage: dict[str, float] = {}
    for jobid, since in started.items():
        usage[user[jobid]] = usage.get(user[jobid], 0.0) + fairshare.decayed(
            tasks[jobid], since, ended.get(jobid, now), now, half_life)
    assert usage == pytest.approx({o: u for (_, o), u in picker.usage.items()}, rel=5e-3)
    for owner in usage:
        assert fairshare.factor(usage, shares, owner) == pytest.approx(picker.factor("normal", owner), rel=5e-3)
