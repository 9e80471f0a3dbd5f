"""HTTPS with a throwaway CA: the CLI, the workers and the scheduler verify the controller; plain HTTP
beyond loopback is refused unless the configuration accepts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from sec_harness import make_tls

from xce.client.launch import LaunchError, start_controller
from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def xce(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xce.cli.main", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_cluster_over_https(tmp_path):
    (tmp_path / "tls").mkdir()
    ca, cert, key = make_tls(tmp_path / "tls")
    cfg = tmp_path / "xce.toml"
    cfg.write_text(f'[controller]\ntls_cert = "{cert}"\ntls_key = "{key}"\ntls_ca = "{ca}"\n')
    cluster = LocalCluster(tmp_path / "state", 1, 1, config=cfg, round_interval=0.05, report_interval=0.5)
    cluster.start()  # the worker registered and the scheduler synced: both verified the certificate
    try:
        assert cluster.url.startswith("https://127.0.0.1:")
        assert json.loads((tmp_path / "state" / "controller.json").read_text())["ca_file"] == str(ca)
        env = cluster.env()
        sub = xce("submit", "--json", "--cwd", str(tmp_path), "--", "sh", "-c", "echo over tls", env=env)
        assert sub.returncode == 0, sub.stderr
        jobid = json.loads(sub.stdout)["jobid"]
        deadline = time.monotonic() + 30
        while (job := json.loads(xce("jobs", "-a", "--json", str(jobid), env=env).stdout)["jobs"][0])["state"] \
                not in ("DONE", "EXIT"):
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        assert job["state"] == "DONE" and (tmp_path / f"xce-{jobid}.out").read_text() == "over tls\n"
        # plain HTTP to the same port gets nothing useful, and tokens never travel in clear
        with pytest.raises(httpx.HTTPError):
            r = httpx.get(cluster.url.replace("https", "http") + "/v1/whoami", timeout=5)
            r.raise_for_status()
        # a client that trusts another CA refuses the controller
        (tmp_path / "other").mkdir()
        other_ca, _, _ = make_tls(tmp_path / "other")
        r = xce("jobs", env={**env, "XCE_CA_FILE": str(other_ca)})
        assert r.returncode == 3 and "securely" in r.stderr and "CERTIFICATE_VERIFY_FAILED" in r.stderr, r.stderr
    finally:
        cluster.stop()


def test_plain_http_beyond_loopback_is_refused_unless_configured(tmp_path):
    with pytest.raises(LaunchError, match="refusing to serve plain HTTP on 0.0.0.0"):
        start_controller(tmp_path / "a", extra_args=("--host", "0.0.0.0"))
    cfg = tmp_path / "insecure.toml"
    cfg.write_text("[controller]\ninsecure_http = true\n")
    ctl = start_controller(tmp_path / "b", config=str(cfg), extra_args=("--host", "0.0.0.0"))
    try:
        r = httpx.get(ctl.url + "/v1/whoami", headers={"Authorization": f"Bearer {ctl.token()}"})
        assert r.status_code == 200
        assert "insecure_http = true: tokens and job data cross the network unencrypted" in ctl.log()
    finally:
        ctl.stop()


def test_unusable_certificates_are_a_clear_startup_error(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(f'[controller]\ntls_cert = "{tmp_path}/missing.pem"\ntls_key = "{tmp_path}/missing.key"\n')
    with pytest.raises(LaunchError, match=r"\[controller\] tls_cert: cannot read"):
        start_controller(tmp_path / "s", config=str(cfg))
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    cfg.write_text(f'[controller]\ntls_cert = "{tmp_path}/junk.pem"\ntls_key = "{tmp_path}/junk.pem"\n')
    with pytest.raises(LaunchError, match="cannot serve HTTPS with them"):
        start_controller(tmp_path / "s2", config=str(cfg))


def test_xceadmin_check_verifies_the_controller_with_the_site_ca(tmp_path):
    """``xceadmin check`` trusted only the system's CAs: a site CA controller 'did not answer' (issue 36)."""
    (tmp_path / "tls").mkdir()
    ca, cert, key = make_tls(tmp_path / "tls")
    cfg = tmp_path / "xce.toml"
    cfg.write_text(f'[controller]\ntls_cert = "{cert}"\ntls_key = "{key}"\ntls_ca = "{ca}"\n')
    ctl = start_controller(tmp_path / "state", config=str(cfg))
    elsewhere = tmp_path / "elsewhere"  # a host without the controller's state directory
    elsewhere.mkdir()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
        env.update(XCE_URL=ctl.url, XCE_TOKEN=ctl.token(), XCE_STATE_DIR=str(elsewhere))

        def check(*args: str, **more: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "xce.cli.admin", "check", *args], env={**env, **more},
                                  capture_output=True, text=True, timeout=60)

        for r in (check(XCE_CA_FILE=str(ca)), check("--ca-file", str(ca))):
            assert f"OK       controller {ctl.url}: leader" in r.stdout, r.stdout + r.stderr
        r = check()  # the system's CAs do not know the site's
        assert r.returncode == 3 and "CERTIFICATE_VERIFY_FAILED" in r.stdout, r.stdout
    finally:
        ctl.stop()
