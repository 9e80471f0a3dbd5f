"""``xceadmin queue close/open`` (badmin qclose/qopen) and what ``xce queues`` and ``xce load``
show of a queue's settings and a host's load: a controller of its own, restarted mid-test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import httpx
import pytest

from xce.client import statedir
from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

CONFIG = """
default_queue = "normal"

[queues.normal]
priority = 30

[queues.short]
priority = 50
run_limit = 30
max_run_limit = 90
process_limit = 64
preempt_signal = "SIGTSTP"
job_pick_plugin = "fairshare"
shares = { ann = 3, bob = 1 }
hooks = { start = "/usr/local/libexec/xce-start" }
"""


class _Cli:
    """``xce`` and ``xceadmin`` as a person on the controller's machine runs them."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def _run(self, module: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=60,
                              env=self.env, stdin=subprocess.DEVNULL)

    def xce(self, *args: str):
        p = self._run("xce.cli.main", *args)
        return SimpleNamespace(code=p.returncode, out=p.stdout, err=p.stderr)

    def admin(self, *args: str):
        p = self._run("xce.cli.admin", *args)
        return SimpleNamespace(code=p.returncode, out=p.stdout, err=p.stderr)


def test_a_closed_queue_stays_closed_over_a_restart_and_queues_show_every_setting(tmp_path):
    (tmp_path / "xce.toml").write_text(CONFIG)
    ctl = start_controller(tmp_path, config=str(tmp_path / "xce.toml"), extra_args=("--worker-timeout", "600"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")} | {"XCE_STATE_DIR": str(tmp_path)}
    statedir.write_private(tmp_path / statedir.USER_TOKEN, ctl.user_token("alice", admin=True))
    cli = _Cli(env)
    try:
        r = cli.admin("queue", "close", "short", "--reason", "licence server down")
        assert r.code == 0 and "Queue short is closed (licence server down)" in r.out, r.err
        assert re.search(r"short\s+50\s+Closed:Active \(licence server down\)", cli.xce("queues").out)
        r = cli.xce("submit", "-q", "short", "--", "true")
        assert r.code == 1 and "closed to new submissions" in r.err, r.err

        ctl.stop()
        ctl = start_controller(tmp_path, config=str(tmp_path / "xce.toml"), extra_args=("--worker-timeout", "600"))
        assert re.search(r"short\s+50\s+Closed:Active \(licence server down\)", cli.xce("queues").out)
        assert cli.xce("submit", "-q", "short", "--", "true").code == 1

        r = cli.admin("queue", "open", "short")
        assert r.code == 0 and r.out == "Queue short is open.\n", r.err
        assert re.search(r"short\s+50\s+Open:Active\s", cli.xce("queues").out)
        assert cli.xce("submit", "-q", "short", "--", "true").code == 0
        r = cli.admin("queue", "close", "nope")
        assert r.code == 1 and "no queue named 'nope'" in r.err, r.err

        long = cli.xce("queues", "-l", "short").out
        for line in ("status: open", "run_limit: 0:30:00", "max_run_limit: 1:30:00", "process_limit: 64",
                     "preempt_signal: SIGTSTP", "picker: fairshare", "shares: ann=3, bob=1",
                     "hooks: start=/usr/local/libexec/xce-start", "fairshare_by: user"):
            assert f"  {line}\n" in long, (line, long)

        # lsload -l: every index the host reported, the usual six and the rest.
        w = httpx.Client(base_url=ctl.url, headers={"Authorization": f"Bearer {ctl.token('worker')}"})
        assert w.post("/v1/workers/register", json={"name": "n1", "resources": {"slots": 1}, "load": {
            "r1m": 0.5, "mem": 1 << 30, "example.com/scratch-io": 12}}).status_code == 200
        long = cli.xce("load", "-l").out
        assert "HOST n1\n" in long and "  example.com/scratch-io  12\n" in long and "  mem  1G\n" in long, long
        assert "scratch-io" not in cli.xce("load").out
    finally:
        ctl.stop()
