"""``GET /v1/workload`` and ``xce workload export`` against a real controller: the finished jobs of a
window as SWF and as XCE JSON-lines, read back by the simulator (``xce sim run``) with no malformed line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller
from xce.sim.swf import read_swf
from xce.sim.workload import read_workload

pytestmark = pytest.mark.integration

HOST = "hwork"
M = 1024**2


def _xce(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "xce"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "xce.cli.main"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sd = tmp_path_factory.mktemp("state")
    ctl = start_controller(sd, config=str(write_config(sd)), extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        yield ctl, api
    finally:
        api.close()
        ctl.stop()


def _play(api: Api) -> dict[str, list[int]]:
    """Jobs of two users in two queues: finished, failed, killed while pending, still running."""
    worker, sched = api("worker"), api("scheduler")
    r = worker.post("/v1/workers/register", json={"name": HOST, "resources": {"slots": 64, "maxmem": 64 << 30,
                                                                              "type": "X86_64"},
                                                  "load": {"mem": 60 << 30}})
    assert r.status_code == 200, r.text
    ids: dict[str, list[int]] = {"done": [], "failed": [], "killed": [], "running": []}

    def submit(who: str, **body) -> int:
        r = api(who).post("/v1/jobs", json={"command": ["/bin/secret", who], **body})
        assert r.status_code == 201, r.text
        return r.json()["jobid"]

    def dispatch(jobid: int, tasks: int) -> None:
        body = {"decisions": [{"id": uuid.uuid4().hex, "ts": 1, "decision": {
            "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [[HOST, tasks]]}}]}
        r = sched.post("/v1/sched/decisions", json=body)
        assert r.status_code == 200 and r.json()["results"][0]["status"] == "applied", r.text

    for k in range(6):
        who, queue, tasks = ("alice", "normal", 1) if k % 2 else ("bob", "high", 4)
        extra = {"run_limit": 600} if k == 0 else {"name": "second", "depend": f"ended({ids['done'][0]})"} \
            if k == 1 else {}
        j = submit(who, queue=queue, tasks=tasks, request="rusage[mem=100M]", job_type="etl" if k % 2 else "",
                   **extra)
        dispatch(j, tasks)
        r = worker.post(f"/v1/workers/{HOST}/load", json={"load": {}, "usage": {str(j): {"memory_rss": 50 * M}}})
        assert r.status_code == 200, r.text
        code = 0 if k < 4 else 3
        r = worker.post(f"/v1/workers/{HOST}/jobs/{j}/status", json={"status": "finished", "exit_code": code})
        assert r.status_code == 200, r.text
        ids["done" if code == 0 else "failed"].append(j)
    j = submit("alice", queue="normal")
    assert api("alice").post(f"/v1/jobs/{j}/kill").status_code == 200
    ids["killed"].append(j)
    j = submit("bob", queue="normal")
    dispatch(j, 1)
    ids["running"].append(j)
    return ids


def test_export_swf_and_xce_read_back_by_the_simulator(cluster, tmp_path):
    ctl, api = cluster
    ids = _play(api)
    env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": api.token_for("carol")}

    # SWF through the CLI: every finished job, nothing unfinished; it reads back with no malformed line.
    out = tmp_path / "win.swf"
    p = _xce("workload", "export", "--since", "10m", "-o", str(out), env=env)
    assert p.returncode == 0, p.stderr
    assert "wrote 7 job(s)" in p.stderr
    text = out.read_text()
    assert "; Queue: " in text and "; User: " in text and "; UnixStartTime: " in text
    trace = read_swf(out)
    assert trace.malformed == 0
    finished = ids["done"] + ids["failed"]
    assert sorted(trace.jobid) == sorted(finished)  # the killed-while-pending one is skipped (run time -1)
    assert trace.skipped.most_common() == [("run time < 0 (unknown)", 1)]
    by_id = {trace.jobid[i]: i for i in range(len(trace))}
    wide = by_id[ids["done"][0]]  # bob's 4-task job
    assert trace.procs[wide] == 4 and trace.req_mem[wide] == 100 * 1024 and trace.used_mem[wide] == 50 * 1024 // 4
    assert trace.req_time[wide] == 600 and trace.req_time[by_id[ids["done"][1]]] == -1  # the run limit, when given
    second = [ln.split() for ln in text.splitlines() if ln.split()[0] == str(ids["done"][1])][0]
    assert second[16] == str(ids["done"][0])  # SWF field 17: the preceding job
    assert ids["running"][0] not in by_id

    # The simulator reads it (cluster from the header: one host of 64 slots) with no malformed line.
    p = _xce("sim", "run", "--workload", str(out), "--json", env=env)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["malformed"] == 0 and summary["jobs_simulated"] == 6 and summary["jobs_started"] == 6

    # Filters: one queue, one user.
    p = _xce("workload", "export", "--since", "10m", "-q", "high", "-u", "bob", env=env)
    assert p.returncode == 0, p.stderr
    high = read_swf(__import__("io").StringIO(p.stdout))
    assert sorted(high.jobid) == sorted(j for j in ids["done"] + ids["failed"] if j in ids["done"][::2] + ids["failed"][::2])

    # XCE JSON-lines: names and request strings kept; another user's command is hidden from carol.
    out = tmp_path / "win.jsonl"
    p = _xce("workload", "export", "--since", "10m", "-o", str(out), env=env)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["xce_workload"] == 1 and lines[0]["hosts"] == 1 and lines[0]["slots"] == 64
    jobs = {j["jobid"]: j for j in lines[1:]}
    assert sorted(jobs) == sorted(finished + ids["killed"])
    first = jobs[ids["done"][0]]
    assert first["user"] == "bob" and first["queue"] == "high" and first["tasks"] == 4
    assert "rusage[mem=100M]" in first["request"] and first["mem_declared"] == 400 * M and first["run_limit"] == 600
    assert first["command"] is None  # carol may not see bob's command
    assert jobs[ids["done"][1]]["name"] == "second" and jobs[ids["done"][1]]["dependencies"] == f"ended({ids['done'][0]})"
    own = _xce("workload", "export", "--since", "10m", "--format", "xce", "-u", "alice",
               env={**env, "XCE_TOKEN": api.token_for("alice")})
    assert all(json.loads(x)["command"] == ["/bin/secret", "alice"] for x in own.stdout.splitlines()[1:])
    trace = read_workload(out)
    assert trace.names.user[trace.jobid.index(ids["done"][0])] == "bob"
    assert trace.skipped.most_common() == [("never started (killed while pending)", 1)]
    p = _xce("sim", "run", "--workload", str(out), "--json", env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["jobs_started"] == 6

    # A window with nothing in it is a header only; a bad window is one line, exit 2.
    p = _xce("workload", "export", "--since", "2000-01-01", "--until", "2000-01-02", env=env)
    assert p.returncode == 0 and all(x.startswith(";") for x in p.stdout.splitlines())
    p = _xce("workload", "export", "--since", "yesterday", env=env)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "yesterday" in p.stderr
    r = api("carol").get("/v1/workload", params={"since": 10, "until": 5})
    assert r.status_code == 422 and "before it starts" in r.text


def test_cluster_export_is_the_cluster_the_simulator_builds(cluster, tmp_path):
    from xce.config.convert import to_sched_config
    from xce.sim.cluster_file import load_cluster_file

    ctl, api = cluster
    _play(api)
    worker = api("worker")
    for name, res in (("h2", {"slots": 8, "maxmem": 16 << 30, "ncpus": 8, "type": "X86_64"}),  # [hosts.h2] slots = 2
                      ("hgpu", {"slots": 4, "maxmem": 32 << 30, "ncpus": 4, "type": "X86_64", "model": "Grace \"Hopper\"",
                                "example.com/gpu": 2})):
        r = worker.post("/v1/workers/register", json={"name": name, "resources": res, "load": {"mem": 1 << 30}})
        assert r.status_code == 200, r.text
    env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": api.token_for("carol")}
    out = tmp_path / "cluster.toml"
    p = _xce("cluster", "export", "-o", str(out), env=env)
    assert p.returncode == 0, p.stderr
    sim = load_cluster_file(out)  # the production loader validates it, as it would an edited copy
    hosts = {h.name: h.values for h in sim.hosts}
    assert hosts["h2"]["slots"] == 2 and hosts["h2"]["maxmem"] == 16 << 30 and hosts["h2"]["type"] == "X86_64"
    assert hosts["hgpu"]["example.com/gpu"] == 2 and hosts["hgpu"]["model"] == 'Grace "Hopper"'
    assert hosts[HOST]["slots"] == 64 and hosts[HOST]["mem"] == 64 << 30
    # The scheduling configuration is the one in force, queue by queue.
    from xce.config.loader import load_config

    live = to_sched_config(load_config(ctl.state_dir / "xce.toml"))
    assert sim.config.queues == live.queues and sim.config.projects == live.projects
    assert sim.default_queue == "normal"
    # A workload of this cluster simulates on it, requests and all.
    wl = tmp_path / "w.jsonl"
    assert _xce("workload", "export", "--since", "10m", "-o", str(wl), env=env).returncode == 0
    p = _xce("sim", "run", "--workload", str(wl), "--cluster", str(out), "--json", env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["jobs_started"] >= 6


def test_whatif_answers_and_refuses_in_one_line(cluster):
    ctl, api = cluster
    _play(api)
    env = {**os.environ, "XCE_URL": ctl.url, "XCE_TOKEN": api.token_for("carol")}
    p = _xce("whatif", "--since", "10m", "--set", "queue.normal.priority=99", "--hosts", "+1", "--json", env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["baseline"]["all"]["jobs"] >= 6 and set(out["baseline"]["queue"]) == {"normal", "high"}
    assert set(out["baseline"]["user"]) == {"alice", "bob"} and out["agreement"]["jobs"] >= 6
    for args, code, text in (
            (("--since", "10m"), 2, "nothing to compare with"),
            (("--since", "2000-01-01", "--until", "2000-01-02", "--hosts", "+1"), 1, "no finished job in the window"),
            (("--since", "10m", "--picker", "nosuch"), 2, "unknown picker 'nosuch'"),
            (("--since", "10m", "--set", "queue.normal.priority=high"), 1, "queues.normal.priority"),
            (("--since", "10m", "--hosts", "-9"), 2, "at least one must stay")):
        p = _xce("whatif", *args, env=env)
        assert p.returncode == code and text in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
