"""``xce up --multi-user`` as an administrator would run it, then a plain user's ``xce submit``.

The user is a real unprivileged account; their ``xce`` runs as them (all ids and groups), once
with a token from ``xceadmin token create`` and once with no token at all, through MUNGE. The job
must write their uid into a file they own. And a personal ``xce up`` refuses to serve anyone else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from sec_harness import Munged, reachable_dir, run_as, unix_users

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def admin_cli(prog: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    module = {"xce": "xce.cli.main", "xceadmin": "xce.cli.admin"}[prog]
    return subprocess.run([sys.executable, "-m", module, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def wait_done(user, jobid: int, env: dict[str, str]) -> dict:
    deadline = time.monotonic() + 30
    while True:
        r = run_as(user, ["jobs", "-a", "--json", str(jobid)], env=env, cwd=user.home)
        assert r.returncode == 0, r.stderr
        job = json.loads(r.stdout)["jobs"][0]
        if job["state"] in ("DONE", "EXIT"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.2)


def test_multi_user_up_then_a_user_submits_with_a_token_and_through_munge():
    with reachable_dir() as base, unix_users(1, base) as (user,):
        munged = Munged(base / "munge").start()
        state = base / "state"
        env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
        try:
            cfg = base / "xce.toml"
            cfg.write_text(f'[auth]\nmunge = true\nmunge_socket = "{munged.socket}"\n')
            up = admin_cli("xce", "up", "--multi-user", "--workers", "2", "--slots", "1", "--state-dir", str(state),
                           "--config", str(cfg), "--report-interval", "0.5", "--round-interval", "0.05", env=env)
            assert up.returncode == 0, up.stdout + up.stderr
            assert "Multi-user: each job runs as the user who submitted it" in up.stdout
            url = json.loads((state / "controller.json").read_text())["url"]

            made = admin_cli("xceadmin", "token", "create", user.name, "--expires", "1d", "--state-dir", str(state),
                             env=env)
            assert made.returncode == 0, made.stderr
            token = made.stdout.strip()
            assert token.startswith("xce2_") and "not shown again" in made.stderr

            as_user = {"XCE_URL": url, "XCE_TOKEN": token}
            sub = run_as(user, ["submit", "--json", "-o", "out.%J", "--", "id", "-u"], env=as_user, cwd=user.home)
            assert sub.returncode == 0, sub.stderr
            jobid = json.loads(sub.stdout)["jobid"]
            assert wait_done(user, jobid, as_user)["state"] == "DONE"
            out = user.home / f"out.{jobid}"
            assert out.read_text() == f"{user.uid}\n"
            assert (out.stat().st_uid, out.stat().st_gid) == (user.uid, user.gid)

            # no token anywhere: the CLI proves who it is with MUNGE
            by_munge = {"XCE_URL": url, "XCE_MUNGE_SOCKET": str(munged.socket)}
            sub = run_as(user, ["submit", "--json", "-o", "munge.%J", "--", "id", "-u"], env=by_munge,
                         cwd=user.home)
            assert sub.returncode == 0, sub.stderr
            job = json.loads(sub.stdout)
            assert job["user"] == user.name
            assert wait_done(user, job["jobid"], by_munge)["state"] == "DONE"
            out = user.home / f"munge.{job['jobid']}"
            assert out.read_text() == f"{user.uid}\n" and out.stat().st_uid == user.uid

            # the token can be listed (never shown again) and revoked; then it no longer works
            listed = admin_cli("xceadmin", "token", "list", "--json", "--state-dir", str(state), env=env)
            (mine,) = [t for t in json.loads(listed.stdout)["tokens"] if t["name"] == user.name]
            assert "token" not in mine and mine["expires"] is not None
            revoked = admin_cli("xceadmin", "token", "revoke", mine["id"], "--state-dir", str(state), env=env)
            assert revoked.returncode == 0 and "revoked" in revoked.stdout
            r = run_as(user, ["jobs"], env=as_user, cwd=user.home)
            assert r.returncode == 1 and "revoked" in r.stderr
        finally:
            admin_cli("xce", "down", "--state-dir", str(state), env=env)
            munged.stop()


def test_multi_user_up_needs_root_to_mean_anything():
    if os.geteuid() != 0:
        r = admin_cli("xce", "up", "--multi-user", env=dict(os.environ))
        assert r.returncode == 2 and "needs root" in r.stderr
        return
    with reachable_dir() as base, unix_users(1, base) as (user,):
        # the same command from an unprivileged user is refused with the reason
        r = run_as(user, ["up", "--multi-user", "--state-dir", str(user.home / "s")], env={}, cwd=user.home)
        assert r.returncode == 2 and "--multi-user needs root" in r.stderr, r.stderr
        assert not (user.home / "s" / "controller.json").exists()


def test_a_personal_cluster_serves_only_its_owner(tmp_path):
    cluster = LocalCluster(tmp_path / "state", 1, 1, round_interval=0.05, report_interval=0.5)
    cluster.start()
    try:
        env = cluster.env()
        r = admin_cli("xceadmin", "user", "add", "someoneelse", env=env)
        assert r.returncode == 1 and "personal cluster" in r.stderr and "--multi-user" in r.stderr, r.stderr
        r = admin_cli("xceadmin", "token", "create", "someoneelse", "--role", "admin", env=env)
        assert r.returncode == 1 and "personal cluster" in r.stderr
        # a worker token is fine (it speaks for a host, not a person)
        assert admin_cli("xceadmin", "token", "create", "node9", "--role", "worker", env=env).returncode == 0
        # the owner's own token, written by xce up, works
        me = httpx.get(cluster.url + "/v1/whoami",
                       headers={"Authorization": f"Bearer {(cluster.state_dir / 'token').read_text().strip()}"})
        assert me.json()["name"] == __import__("getpass").getuser()
    finally:
        cluster.stop()
