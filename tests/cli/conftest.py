"""Fixtures for CLI tests: a real controller and the installed ``xce`` / ``xceadmin`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from xce.client import statedir
from xce.client.launch import start_controller

CONFIG = """
cluster_name = "clitest"
default_queue = "normal"

[queues.normal]
priority = 30

[queues.high]
priority = 50
"""


def command(name: str) -> list[str]:
    """The installed console script next to this interpreter, else the module (same code path)."""
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    module = {"xce": "xce.cli.main", "xceadmin": "xce.cli.admin"}[name]
    return [sys.executable, "-m", module]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@dataclass
class Cli:
    env: dict[str, str]

    def run(self, prog: str, *args: str, env: dict[str, str] | None = None, timeout: float = 60,
            input: str = "") -> Result:
        # Standard input is given (empty unless ``input``): `xce submit` without a command reads its script there.
        p = subprocess.run(command(prog) + list(args), capture_output=True, text=True, timeout=timeout,
                           env={**self.env, **(env or {})}, input=input)
        return Result(p.returncode, p.stdout, p.stderr)

    def xce(self, *args: str, **kw) -> Result:
        return self.run("xce", *args, **kw)

    def admin(self, *args: str, **kw) -> Result:
        return self.run("xceadmin", *args, **kw)


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    sd = tmp_path_factory.mktemp("clistate")
    cfg = sd / "xce.toml"
    cfg.write_text(CONFIG)
    ctl = start_controller(sd, config=str(cfg), extra_args=("--worker-timeout", "600"))
    # An administrator's own token, which the CLI reads before the service token: root's fallback
    # to that one is refused at submission on a multi-user cluster.
    statedir.write_private(sd / statedir.USER_TOKEN, ctl.user_token("alice", admin=True))
    yield ctl
    ctl.stop()


@pytest.fixture(scope="module")
def cli(controller):
    """Commands run as a person on the controller's machine would: the state directory gives the
    address (controller.json) and the user's token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    env["XCE_STATE_DIR"] = str(controller.state_dir)
    return Cli(env)
