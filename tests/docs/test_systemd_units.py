"""The systemd units in examples/systemd start XCE the way the admin guide says, with options XCE has.

Each unit's ExecStart (with the example environment file's values and a host name for %H) is run
with ``--help`` appended: click parses every option before it prints help, so an option that does
not exist, or a value of the wrong type, fails the test.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[2] / "examples" / "systemd"
SERVICES = ("xce-controller", "xce-scheduler", "xce-worker")


def unit(name: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str  # systemd keys are case-sensitive
    cp.read_string((UNITS / f"{name}.service").read_text())
    return cp


def env_files(name: str) -> list[str]:
    """Every ``EnvironmentFile=`` of a unit (configparser keeps only the last of repeated keys)."""
    text = (UNITS / f"{name}.service").read_text()
    return [line.partition("=")[2].strip() for line in text.splitlines() if line.startswith("EnvironmentFile=")]


def example_env() -> dict[str, str]:
    env = {}
    for line in (UNITS / "xce.env").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    return env


@pytest.mark.parametrize("name", SERVICES)
def test_exec_start_uses_only_options_xce_has(name):
    env = example_env()
    cmd = unit(name)["Service"]["ExecStart"].replace("\\\n", " ")
    cmd = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], cmd).replace("%H", "ctl1.example.com")
    argv = shlex.split(cmd)
    programs = {"/opt/xce/bin/xce": "xce.cli.main", "/opt/xce/bin/xceadmin": "xce.cli.admin"}
    assert argv[0] in programs, argv
    r = subprocess.run([sys.executable, "-m", programs[argv[0]], *argv[1:], "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, f"{name}: {cmd}\n{r.stdout}\n{r.stderr}"


@pytest.mark.parametrize("name", SERVICES)
def test_units_restart_on_failure_as_the_right_user_with_state_and_logs(name):
    svc = unit(name)["Service"]
    assert svc["Restart"] == "on-failure"
    assert svc["User"] == ("root" if name == "xce-worker" else "xce")
    assert svc["StateDirectory"] == "xce" and svc["LogsDirectory"] == "xce"
    assert env_files(name) == ["/etc/xce/xce.env", *(["/etc/xce/xce-db.env"] if name == "xce-controller" else [])]
    assert "--state-dir /var/lib/xce" in svc["ExecStart"]
    assert svc["StandardError"] == f"append:/var/log/xce/{name.removeprefix('xce-')}.log"
    if name == "xce-worker":
        assert svc["KillMode"] == "process"  # restarting the worker must not kill the jobs it runs
        assert svc["Delegate"] == "yes"  # systemd lets it make the jobs' control groups
    assert unit(name)["Install"]["WantedBy"] == "multi-user.target"


def test_the_admin_guide_installs_from_these_units():
    guide = (UNITS.parents[1] / "docs" / "admin-guide.md").read_text()
    for name in (*SERVICES, "xce.env", "xce-db.env", "xce.logrotate"):
        assert f"examples/systemd/{name}" in guide, name


def test_the_database_password_is_on_controller_hosts_only():
    """xce.env goes on every host and users source it: no password in it, nor a group execution hosts lack."""
    assert "XCE_DB" not in example_env() and "XCE_DB" in (UNITS / "xce-db.env").read_text()
    guide = (UNITS.parents[1] / "docs" / "admin-guide.md").read_text()
    installs = [line.split("#")[0] for line in guide.splitlines() if "sudo install" in line and "xce" in line]
    every_host = [line for line in installs if "xce.env" in line]
    assert every_host and not any("-g xce" in line for line in every_host), every_host
    db_env = guide.index("install -m 0640 -g xce examples/systemd/xce-db.env")
    assert guide.rindex("useradd --system", 0, db_env) > guide.index("On the controller hosts only")
