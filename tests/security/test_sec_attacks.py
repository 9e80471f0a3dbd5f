"""Attacks on a multi-user cluster: a real root worker, real Unix users, real jobs.

Each test is one thing an unprivileged user might try; it fails if the attack works. The cluster is
what ``xce up --multi-user`` starts (workers as root, each job as its owner) with MUNGE enabled
against a private ``munged``; the users are made with ``useradd`` and removed afterwards.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import httpx
import pytest
from sec_harness import Munged, Site, reachable_dir, run_as, unix_users

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FAST = {"round_interval": 0.05, "report_interval": 0.5}
BIG = 2**63


@pytest.fixture(scope="module")
def site():
    with reachable_dir() as base, unix_users(2, base) as users:
        munged = Munged(base / "munge").start()
        try:
            root_dir = base / "rootonly"
            root_dir.mkdir(mode=0o755)
            (root_dir / "precious").write_text("precious\n")
            (root_dir / "precious").chmod(0o644)
            (base / "private").mkdir(mode=0o700)
            cfg = base / "xce.toml"
            cfg.write_text(f'[auth]\nmunge = true\nmunge_socket = "{munged.socket}"\n')
            cluster = LocalCluster(base / "state", 2, 2, config=cfg, run_as_self=False, **FAST)
            cluster.start()
            try:
                yield Site(cluster, users, munged, base)
            finally:
                cluster.stop()
        finally:
            munged.stop()


def untouched(path: Path) -> None:
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o644), f"{path} changed hands or mode"
    assert path.read_text() == "precious\n", f"{path} was written to"


def test_a_job_is_its_submitter(site):
    a = site.alice
    jobid = site.submit(a, ["sh", "-c", "id -u; id -g; id -G; echo $HOME $USER"], stdout="id.%J")
    assert site.wait(jobid)["state"] == "DONE"
    out = a.home / f"id.{jobid}"
    uid, gid, groups, env = out.read_text().splitlines()
    assert (int(uid), int(gid)) == (a.uid, a.gid) and "0" not in groups.split()
    assert env == f"{a.home} {a.name}"
    st = out.stat()
    assert (st.st_uid, st.st_gid) == (a.uid, a.gid)


@pytest.mark.parametrize("field", ["stdout", "stderr"])
def test_output_paths_at_root_files(site, field):
    target = site.base / "rootonly" / "precious"
    jobid = site.submit(site.alice, ["sh", "-c", "echo pwned; echo pwned >&2"], **{field: str(target)})
    job = site.wait(jobid)
    assert job["state"] == "EXIT" and f"cannot open output file {target} as user {site.alice.name}" in job["reason"]
    untouched(target)


def test_output_directories_created_inside_root_directories(site):
    target = site.base / "rootonly" / "newdir" / "out"
    job = site.wait(site.submit(site.alice, ["echo", "pwned"], stdout=str(target)))
    assert job["state"] == "EXIT" and "cannot create the directory" in job["reason"]
    assert not (site.base / "rootonly" / "newdir").exists()


def test_working_directories_the_user_cannot_use(site):
    private = site.base / "private"
    job = site.wait(site.submit(site.alice, ["touch", "planted"], cwd=str(private)))
    assert job["state"] == "EXIT" and "cannot enter the working directory" in job["reason"], job["reason"]
    # enterable but not writable: the default output file cannot be made there, and nothing runs
    rootonly = site.base / "rootonly"
    job = site.wait(site.submit(site.alice, ["touch", str(rootonly / "planted")], cwd=str(rootonly)))
    assert job["state"] == "EXIT" and "Permission denied" in job["reason"], job["reason"]
    assert sorted(p.name for p in rootonly.iterdir()) == ["precious"] and list(private.iterdir()) == []


def test_symlinks_planted_in_the_output_directory(site):
    a, target = site.alice, site.base / "rootonly" / "precious"
    outdir = a.home / "results"
    outdir.mkdir()
    os.chown(outdir, a.uid, a.gid)
    link = outdir / "run.out"
    link.symlink_to(target)
    os.lchown(link, a.uid, a.gid)
    job = site.wait(site.submit(a, ["echo", "pwned"], stdout=str(link)))
    assert job["state"] == "EXIT" and "symbolic link" in job["reason"]
    # a link to a root directory, used as a directory of the path: followed with alice's rights only
    dlink = outdir / "into-root"
    dlink.symlink_to(site.base / "rootonly")
    job = site.wait(site.submit(a, ["echo", "pwned"], stdout=str(dlink / "precious")))
    assert job["state"] == "EXIT" and "Permission denied" in job["reason"]
    untouched(target)


def test_dot_dot_paths(site):
    a = site.alice
    sneaky = "../" * 12 + str(site.base / "rootonly" / "precious").lstrip("/")
    job = site.wait(site.submit(a, ["echo", "pwned"], stdout=sneaky, stderr=sneaky))
    assert job["state"] == "EXIT" and "Permission denied" in job["reason"]
    untouched(site.base / "rootonly" / "precious")
    job = site.wait(site.submit(a, ["echo", "pwned"], stdout=f"../{site.bob.name}/planted"))
    assert job["state"] == "EXIT" and not (site.bob.home / "planted").exists()


def test_another_users_job_is_out_of_reach(site):
    a, b = site.alice, site.bob
    pidfile = a.home / "victim.pid"
    victim = site.submit(a, ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"], stdout="victim.out")
    site.wait(victim, ("RUN",))
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the victim did not start"
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    mallory = site.as_(b)
    for method, path in (("POST", f"/v1/jobs/{victim}/kill"), ("POST", f"/v1/jobs/{victim}/suspend"),
                         ("POST", f"/v1/jobs/{victim}/resume"), ("GET", f"/v1/jobs/{victim}")):
        r = mallory.request(method, path)
        assert r.status_code == 403 and f"belongs to {a.name}" in r.json()["detail"], (path, r.text)
    assert mallory.patch(f"/v1/jobs/{victim}", json={"priority": 99, "queue": "normal"}).status_code == 403
    # listed, but without what only its owner may see
    (seen,) = [j for j in mallory.get("/v1/jobs", params={"user": "all"}).json()["jobs"] if j["jobid"] == victim]
    assert seen["command"] is None and seen["user"] == a.name
    # and the kernel refuses bob's own processes too: a job of bob's cannot signal alice's job
    job = site.wait(site.submit(b, ["kill", "-STOP", str(pid)], stdout="kill.out", stderr="kill.out"))
    assert job["state"] == "EXIT"
    assert "Operation not permitted" in (b.home / "kill.out").read_text()
    with open(f"/proc/{pid}/stat") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] == "S", "alice's job was stopped"
    after = site.job(victim)
    assert (after["state"], after["priority"]) == ("RUN", 0)
    assert site.as_(a).post(f"/v1/jobs/{victim}/kill").status_code == 200


def test_a_job_cannot_touch_the_worker(site):
    """No token in the job's environment, the worker's files unreadable, the worker unsignalable."""
    b = site.bob
    worker_pid = site.cluster.procs[site.cluster.worker_names[0]].pid
    token_file = site.cluster.state_dir / "tokens" / "worker"
    script = (f"env | grep -c '^XCE_[A-Z_]*TOKEN'; cat {token_file} && echo LEAKED; kill -9 {worker_pid} && echo KILLED; "
              f"true")
    job = site.wait(site.submit(b, ["sh", "-c", script], stdout="probe.out", stderr="probe.out"))
    assert job["state"] == "DONE"
    out = (b.home / "probe.out").read_text()
    assert out.startswith("0\n") and "LEAKED" not in out and "KILLED" not in out, out
    assert site.cluster.procs[site.cluster.worker_names[0]].poll() is None


def test_root_and_unknown_owners_do_not_run(site):
    root = httpx.Client(base_url=site.cluster.url, headers={"Authorization": f"Bearer {site.token('root')}"})
    # Refused at submission, with the reason (it used to be accepted, then fail on every worker).
    r = root.post("/v1/jobs", json={"command": ["touch", str(site.base / "rootonly" / "byroot")], "cwd": "/"})
    assert r.status_code == 403 and "root's jobs are not allowed on this cluster" in r.json()["detail"], r.text
    ghost = httpx.Client(base_url=site.cluster.url, headers={"Authorization": f"Bearer {site.token('xtsghost')}"})
    job = site.wait(ghost.post("/v1/jobs", json={"command": ["true"], "cwd": "/"}).json()["jobid"])
    assert job["state"] == "EXIT" and "does not exist on this host" in job["reason"]
    assert not (site.base / "rootonly" / "byroot").exists()


def test_service_endpoints_refuse_user_tokens(site):
    c = site.as_(site.alice)
    name = site.cluster.worker_names[0]
    for method, path, body in (
        ("GET", "/v1/sched/state", None), ("GET", "/v1/sched/events", None), ("GET", "/v1/sched/control", None),
        ("POST", "/v1/sched/decisions", {"decisions": []}),
        ("POST", "/v1/workers/register", {"name": name}), ("POST", f"/v1/workers/{name}/load", {"load": {}}),
        ("GET", f"/v1/workers/{name}/actions", None),
        ("POST", f"/v1/workers/{name}/jobs/1/status", {"status": "finished", "exit_code": 0}),
        ("POST", "/v1/admin/tokens", {"name": site.alice.name, "role": "admin"}),
        ("GET", "/v1/admin/tokens", None), ("POST", "/v1/admin/scheduler/record", {"action": "start"}),
    ):
        r = c.request(method, path, json=body)
        assert r.status_code == 403, (path, r.status_code, r.text)


def test_revoked_and_expired_tokens(site):
    a = site.alice
    token = site.token(a.name, note="to be revoked")
    c = httpx.Client(base_url=site.cluster.url, headers={"Authorization": f"Bearer {token}"})
    assert c.get("/v1/whoami").json()["name"] == a.name
    token_id = token.split("_", 1)[1].split(".")[0]
    site.cluster.request("POST", f"/v1/admin/tokens/{token_id}/revoke")
    r = c.post("/v1/jobs", json={"command": ["true"]})
    assert r.status_code == 401 and "revoked" in r.json()["detail"]
    short = site.token(a.name, expires_in_s=1)
    c = httpx.Client(base_url=site.cluster.url, headers={"Authorization": f"Bearer {short}"})
    assert c.get("/v1/whoami").status_code == 200
    time.sleep(1.2)
    r = c.get("/v1/whoami")
    assert r.status_code == 401 and "expired" in r.json()["detail"]
    listed = {t["id"]: t for t in site.cluster.request("GET", "/v1/admin/tokens", all="true")["tokens"]}
    assert listed[token_id]["status"] == "revoked" and listed[token_id]["revoked_by"] == "admin"
    assert all("token" not in t and "digest" not in t for t in listed.values())


def _munge_call(site, credential: str, path: str = "/v1/whoami") -> httpx.Response:
    return httpx.get(site.cluster.url + path, headers={"Authorization": f"MUNGE {credential}"})


def test_munge_identity_and_forged_credentials(site, tmp_path):
    # the real thing: a credential made for alice (by munged, from the kernel's view of the caller)
    r = run_as(site.alice, ["jobs", "--json"], env={"XCE_URL": site.cluster.url,
                                                     "XCE_MUNGE_SOCKET": str(site.munged.socket)}, cwd=site.alice.home)
    assert r.returncode == 0, r.stderr
    good = site.munged.encode(b"xce GET /v1/whoami")
    assert _munge_call(site, good).json()["name"] == "root"  # made by this (root) test process
    # replayed: the same credential a second time
    r = _munge_call(site, good)
    assert r.status_code == 401 and "replayed" in r.json()["detail"]
    # forged: made by another munged with another key
    with reachable_dir() as other_base:
        forger = Munged(other_base / "m").start()
        try:
            forged = forger.encode(b"xce GET /v1/whoami")
        finally:
            forger.stop()
    r = _munge_call(site, forged)
    assert r.status_code == 401 and "not valid" in r.json()["detail"]
    # tampered, garbage, made for another request, expired
    tampered = good[:20] + ("A" if good[20] != "A" else "B") + good[21:]
    for cred in (tampered, "MUNGE:garbage:", "x" * 5000):
        assert _munge_call(site, cred).status_code == 401
    other = site.munged.encode(b"xce GET /v1/jobs")
    r = _munge_call(site, other)
    assert r.status_code == 401 and "another request" in r.json()["detail"]
    old = site.munged.encode(b"xce GET /v1/whoami", ttl=1)
    time.sleep(2.1)
    r = _munge_call(site, old)
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_hostile_ids_and_nul_bytes_on_the_live_cluster(site):
    c = site.as_(site.bob)
    for jobid in (BIG, -1):
        assert c.get(f"/v1/jobs/{jobid}").status_code == 422
        assert c.post(f"/v1/jobs/{jobid}/kill").status_code == 422
    assert c.post("/v1/jobs", json={"command": ["true"], "stdout": "out\0/etc/shadow"}).status_code == 422
    assert c.get("/v1/jobs", params={"user": "x\0"}).status_code == 422
    job = site.wait(site.submit(site.bob, ["true"], stdout="fine.out"))
    assert job["state"] == "DONE"
