"""``xce up`` as an administrator uses it for a cluster that must keep running: PostgreSQL with two
controllers, kill -9 of the leader, processes that die and come back, ``xce down`` leaving nothing."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from ha_harness import UpCluster, wait_for

from xce.client.follow import Session

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FAST = ("--round-interval", "0.05", "--report-interval", "0.5")


def job_states(http, ids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i in range(0, len(ids), 200):
        chunk = ids[i:i + 200]
        r = http.get("/v1/jobs", params={"all": True, "user": "all", "id": chunk})
        out.update({j["jobid"]: j["state"] for j in r.json()["jobs"]})
    return out


def test_two_controllers_on_postgresql_100_jobs_survive_kill9_of_the_leader(tmp_path, pg_url):
    c = UpCluster(tmp_path)
    out = c.up("--db", pg_url, "--controllers", "2", "--workers", "3", "--slots", "2", *FAST)
    try:
        assert "controllers http://127.0.0.1:" in out.stdout and "supervised" in out.stdout
        assert len(c.urls) == 2 and c.leader()[0] == c.urls[0]
        # The database URL is kept off every command line (`ps` shows them to all users).
        assert all(pg_url not in line for line in c.leftovers())
        work = tmp_path / "runs"
        work.mkdir()
        cmd = ["sh", "-c", f"sleep 0.2; echo $XCE_JOBID >> {work}/$XCE_JOBID"]
        ids: list[int] = []
        with Session(c.urls, c.token("admin"), patience=30) as http:
            ids += [http.post("/v1/jobs", json={"command": cmd, "cwd": str(tmp_path)}).json()["jobid"] for _ in range(50)]
            leader_url, st = c.leader()
            os.kill(st["controller"]["pid"], signal.SIGKILL)
            killed = time.monotonic()
            # Users keep submitting through the takeover with the plain CLI (XCE_STATE_DIR lists both).
            for i in range(10):
                r = c.xce("submit", "--json", "--", *cmd)
                assert r.returncode == 0, r.stderr
                ids.append(json.loads(r.stdout)["jobid"])
                if i == 0:
                    took = time.monotonic() - killed
            ids += [http.post("/v1/jobs", json={"command": cmd, "cwd": str(tmp_path)}).json()["jobid"] for _ in range(40)]
            assert len(ids) == len(set(ids)) == 100
            wait_for(lambda: set(job_states(http, ids).values()) == {"DONE"}, 120,
                     lambda: f"all 100 jobs DONE (now {sorted(set(job_states(http, ids).values()))})", interval=0.5)
        # Each ran exactly once.
        assert sorted(int(p.name) for p in work.iterdir()) == sorted(ids)
        assert all(p.read_text() == f"{p.name}\n" for p in work.iterdir())
        new_leader = c.leader()
        assert new_leader is not None and new_leader[1]["leader"]["term"] >= 2
        # The killed controller was restarted by the supervisor, on its own address, as a follower.
        wait_for(lambda: len(c.statuses()) == 2, 30, "the killed controller to be back")
        assert c.file()["restarts"] == {("controller-1" if leader_url == c.urls[0] else "controller-2"): 1}
        assert "was killed by SIGKILL" in c.log("supervisor")
        print(f"\nthe first `xce submit` after kill -9 of the leader returned {took:.2f}s after the kill")
    finally:
        down = c.down()
    assert down.returncode == 0, down.stdout + down.stderr
    assert c.leftovers() == []
    assert not (c.state / "cluster.json").exists()


def test_up_restarts_what_dies_and_down_stops_the_restarted(tmp_path):
    c = UpCluster(tmp_path)
    c.up("--workers", "2", "--slots", "2", *FAST)
    try:
        pids = c.file()["pids"]
        # The scheduler, killed: back within 5 s, and the jobs that pended meanwhile start.
        os.kill(pids["scheduler"], signal.SIGKILL)
        killed = time.monotonic()
        ids = [json.loads(c.xce("submit", "--json", "--", "sleep", "0.2").stdout)["jobid"] for _ in range(3)]
        new = wait_for(lambda: (p := c.file()["pids"]["scheduler"]) != pids["scheduler"] and p, 10,
                       "the scheduler to be restarted")
        back = time.monotonic() - killed
        assert back <= 5.0, back

        def states():
            jobs = json.loads(c.xce("jobs", "-a", "--json").stdout)["jobs"]
            return {j["jobid"]: j["state"] for j in jobs if j["jobid"] in ids}

        wait_for(lambda: set(states().values()) == {"DONE"}, 60, lambda: f"the pending jobs to run ({states()})")
        started = time.monotonic() - killed
        log = c.log("supervisor")
        assert f"scheduler (pid {pids['scheduler']}) was killed by SIGKILL" in log
        assert f"scheduler restarted (pid {new}, restart 1)" in log
        print(f"\nscheduler back {back:.2f}s after SIGKILL; its pending jobs done after {started:.2f}s")

        # A recording the scheduler cannot write (the file exists already, and it never overwrites one):
        # refused, said, and scheduling goes on.
        (c.state / "recordings").mkdir(exist_ok=True)
        (c.state / "recordings" / "taken.jsonl").write_text("someone else's\n")
        r = c.xceadmin("scheduler", "record", "start", "taken.jsonl")
        assert r.returncode == 0, r.stderr
        wait_for(lambda: "cannot record to" in c.log("scheduler"), 20, "the scheduler to refuse the path")
        assert "ERROR cannot record to" in c.log("scheduler") and "scheduling goes on" in c.log("scheduler")
        jobid = json.loads(c.xce("submit", "--json", "--", "true").stdout)["jobid"]
        wait_for(lambda: json.loads(c.xce("jobs", "-a", "--json", str(jobid)).stdout)["jobs"][0]["state"] == "DONE",
                 30, "a job after the refused recording")
        assert c.file()["pids"]["scheduler"] == new  # it never died

        # A worker and the controller, killed: both come back; the controller on the same address.
        url = c.file()["url"]
        worker = sorted(k for k in pids if k not in ("controller", "scheduler"))[0]
        os.kill(pids[worker], signal.SIGKILL)
        os.kill(pids["controller"], signal.SIGKILL)
        # Submitted at once, while nothing listens: retried (and said) until the controller is back.
        r = c.xce("submit", "--json", "--", "true")
        assert r.returncode == 0, r.stderr
        jobid = json.loads(r.stdout)["jobid"]
        assert c.file()["restarts"].get("controller") == 1
        # sbatch as Slurm's: it says it is retrying, in Slurm's words, once, and submits.
        os.kill(c.file()["pids"]["controller"], signal.SIGKILL)
        r = c.run("xce.compat.slurm.sbatch", "--wrap", "true")
        assert r.returncode == 0 and r.stdout.startswith("Submitted batch job "), r.stderr
        assert r.stderr.count("sbatch: error: Slurm controller not responding, sleeping and retrying.") <= 1
        assert c.file()["restarts"].get("controller") == 2
        wait_for(lambda: json.loads(c.xce("jobs", "-a", "--json", str(jobid)).stdout)["jobs"][0]["state"] == "DONE",
                 60, "a job after the controller restart")
        assert c.file()["url"] == url
        wait_for(lambda: c.file()["restarts"].get(worker) == 1, 20, "the worker to be restarted")
        assert sorted(c.file()["restarts"]) == sorted(["scheduler", "controller", worker])
    finally:
        down = c.down()
    assert down.returncode == 0, down.stdout + down.stderr
    assert c.leftovers() == []


def test_up_refuses_several_controllers_without_a_shared_database(tmp_path):
    c = UpCluster(tmp_path)
    r = c.xce("up", "--state-dir", str(c.state), "--controllers", "2", env=c.env)
    assert r.returncode == 2 and "--controllers 2 needs a database the controllers share" in r.stderr
    assert c.leftovers() == []
