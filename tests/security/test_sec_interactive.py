"""An interactive job (``xce submit -I``) on a root worker: it runs as its owner, inside its
container, and nobody else can reach its terminal.

Two real unprivileged users. The first one's job reads its input from their ``xce``; while it
waits, the second one tries every way in: the attach route with their own token, the head host's
task server with a key they made up, and with a real key granted for their own interactive job.
Each attempt must be refused, and the owner's session must carry on untouched afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from sec_harness import reachable_dir, unix_users

from xce.cluster import LocalCluster
from xce.worker import taskauth

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Loaded before the switch to the user (the interpreter's files are root's, see sec_harness).
PRELOAD = ("xce.cli.main", "xce.cli.submit", "xce.cli.interactive", "xce.cli.client", "xce.cli.envcopy",
           "xce.cli.jobscript", "xce.cli.directives", "xce.compat.slurm.options", "xce.compat.lsf.options", "xce.cli.placement", "xce.cli.spec", "xce.jobref", "xce.client.transport",
           "xce.client.follow", "xce.client.statedir", "xce.worker.taskauth", "xce.worker.ttywire",
           "signal", "time", "termios", "tty", "select", "socket", "json", "hmac", "hashlib", "secrets", "struct", "ctypes",
           "encodings.idna", "urllib.parse", "difflib", "shlex")


def as_user(user, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    prelude = (
        "import importlib, os, sys\n"
        f"for m in {PRELOAD!r}:\n"
        "    try: importlib.import_module(m)\n"
        "    except ImportError: pass\n"
        f"os.setgroups(os.getgrouplist({user.name!r}, {user.gid})); os.setgid({user.gid}); os.setuid({user.uid})\n"
        f"os.chdir({str(user.home)!r})\n"
        "sys.argv[0] = 'xce'\n"
        "from xce.cli.main import main; main()\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    return subprocess.Popen([sys.executable, "-c", prelude, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**clean, "HOME": str(user.home), "USER": user.name, **env})


def attach_route(cluster: LocalCluster, token: str, jobid: int) -> tuple[int, dict]:
    with cluster.session(token) as http:
        r = http.post(f"/v1/jobs/{jobid}/attach", json={})
    return r.status_code, r.json()


def raw_attach(address: str, jobid: int, key: str) -> dict:
    """What an attacker's own client gets from the head host's task server."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        f = s.makefile("rb")
        nonce = json.loads(f.readline())["nonce"]
        request = {"jobid": jobid, "attach": True, "rows": 24, "cols": 80, "raw": True}
        s.sendall((json.dumps(taskauth.sign(key, nonce, request)) + "\n").encode())
        return json.loads(f.readline())


def wait_state(cluster: LocalCluster, jobid: int, states: tuple[str, ...], timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = cluster.request("GET", "/v1/jobs", id=jobid, all="true")["jobs"][0]
        if job["state"] in states:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def test_only_the_owner_reaches_an_interactive_jobs_terminal():
    with reachable_dir() as base, unix_users(2, base) as (alice, mallory):
        cluster = LocalCluster(base / "state", 1, 2, run_as_self=False, round_interval=0.05, report_interval=0.5)
        owner = None
        try:
            cluster.start()
            tokens = {u.name: cluster.request("POST", "/v1/admin/tokens", {"name": u.name, "role": "user"})["token"]
                      for u in (alice, mallory)}
            env = {"XCE_URL": cluster.url, "XCE_TOKEN": tokens[alice.name]}
            owner = as_user(alice, ["submit", "-I", "--", "sh", "-c",
                                    "read go; id -u; cat /proc/self/cgroup; echo \"got $go\"; exit 4"], env)
            jobid = wait_for_job(cluster, alice.name)
            job = wait_state(cluster, jobid, ("RUN",))
            assert job["user"] == alice.name

            # the attach route: only the owner (or an admin) gets a key
            status, answer = attach_route(cluster, tokens[mallory.name], jobid)
            assert status == 403 and "belongs to" in answer["detail"], answer

            # the task server, with a made-up key and with a real key of another job
            with cluster.session(tokens[mallory.name]) as http:
                theirs = http.post("/v1/jobs", json={"command": ["sleep", "60"], "interactive": True,
                                                     "cwd": str(mallory.home)}).json()["jobid"]
            wait_state(cluster, theirs, ("RUN",))
            status, grant = attach_route(cluster, tokens[mallory.name], theirs)
            assert status == 200 and grant["jobid"] == theirs, grant
            for key in ("0" * 32, grant["key"]):
                refused = raw_attach(grant["address"], jobid, key)
                assert "attached" not in refused and "refused" in refused["error"], refused
            with cluster.session(tokens[mallory.name]) as http:
                http.post(f"/v1/jobs/{theirs}/kill", json={})

            # the owner's session is untouched: input in, output out, as the owner, in the job's container
            out, err = owner.communicate("hello\n", timeout=60)
            assert owner.returncode == 4, err
            lines = out.splitlines()
            assert lines[0] == str(alice.uid), out
            assert lines[-1] == "got hello"
            cgroup = "\n".join(lines[1:-1])
            members = cluster_job_cgroup_hint(jobid)
            assert any(h in cgroup for h in members), (cgroup, members)
            assert wait_state(cluster, jobid, ("EXIT",))["exit_code"] == 4
        finally:
            if owner is not None and owner.poll() is None:
                owner.kill()
                owner.wait(10)
            cluster.stop()


def wait_for_job(cluster: LocalCluster, user: str, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while True:
        jobs = cluster.request("GET", "/v1/jobs", user=user, all="true")["jobs"]
        if jobs:
            return int(jobs[0]["jobid"])
        assert time.monotonic() < deadline, "the owner's job was never submitted"
        time.sleep(0.1)


def cluster_job_cgroup_hint(jobid: int) -> list[str]:
    """How the job's control group is named (cgroup v2 or v1), or the whole-host line of the
    process-group fallback, where there is no group of the job's own."""
    return [f"/job_{jobid}"] + (
        [] if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else ["0::/"])
