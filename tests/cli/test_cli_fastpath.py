"""The typer-free fast path parses exactly what typer parses, and client processes stay light."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from xce.cli import cluster, jobctl, jobs, submit
from xce.cli.main import COMMANDS

ALL = {c.name: c for m in (submit, jobs, jobctl, cluster) for c in m.COMMAND_SPECS}

CASES = [
    ("submit", ["--", "sleep", "10"]),
    ("submit", ["sleep", "10", "-q", "x"]),  # options end at the first command word
    ("submit", ["-q", "high", "-n", "4", "-R", "select[mem>4G]", "-P", "p", "--type", "t", "--priority", "-5",
                "--request", "mem=4G", "--request", "example.com/gpu=1", "--limit", "mem=8G", "-o", "o.%J",
                "-e", "e.%J", "--array", "3", "--cwd", "/tmp", "--env", "A=1", "--env", "B=2", "--json",
                "--url", "http://h:1", "--token", "t", "--state-dir", "/s", "--", "a", "-b", "--c"]),
    ("submit", ["--queue=high", "--tasks=2", "--", "x"]),
    ("jobs", []),
    ("jobs", ["-a", "-u", "all", "-q", "normal", "-s", "PEND,RUN", "-l", "--json"]),
    ("jobs", ["12", "-l", "13"]),
    ("kill", ["1", "2", "3"]),
    ("resume", ["--json", "7"]),
    ("modify", ["5", "--priority", "3", "-q", "high", "-P", "p"]),
    ("hosts", ["--json"]),
    ("load", []),
    ("queues", ["--url", "http://x:1"]),
]


def typer_parse(command, argv):
    captured = {}
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Group mode."""

    command.register(app, run=lambda **kw: captured.update(kw))
    result = CliRunner().invoke(app, [command.name, *argv])
    assert result.exit_code == 0, result.output
    return captured


@pytest.mark.parametrize("name,argv", CASES, ids=[f"{n}:{' '.join(a)}" for n, a in CASES])
def test_fast_parser_agrees_with_typer(name, argv):
    command = ALL[name]
    fast = command.parse(argv)
    assert fast is not None
    slow = typer_parse(command, argv)
    assert {k: (list(v) if isinstance(v, tuple) else v) for k, v in slow.items()} == fast


@pytest.mark.parametrize("name,argv", [
    ("submit", ["--help"]), ("submit", []), ("submit", ["--array", "0", "--", "x"]), ("submit", ["-n", "x", "--", "y"]),
    ("jobs", ["-al"]), ("jobs", ["--bogus"]), ("jobs", ["abc"]), ("kill", []), ("submit", ["-qhigh", "--", "x"]),
    ("jobs", ["--json=1"]), ("modify", ["1", "2"]), ("submit", ["-q"]),
])
def test_anything_unusual_goes_to_typer(name, argv):
    assert ALL[name].parse(argv) is None


def test_every_command_module_registers():
    """Each line of COMMANDS names an importable module whose register() defines that command."""
    for name, module in COMMANDS.items():
        app = typer.Typer()

        @app.callback()
        def _root() -> None:
            """Group mode."""

        __import__(module, fromlist=["register"]).register(app)
        names = {c.name or (c.callback.__name__ if c.callback else None) for c in app.registered_commands}
        names |= {g.name for g in app.registered_groups}
        assert name in names, (name, module, names)


HEAVY = ("fastapi", "sqlalchemy", "uvicorn", "numpy", "xce.core", "typer", "httpx", "pydantic", "rich", "starlette")


@pytest.mark.parametrize("argv", [["jobs", "--json"], ["submit", "--json", "--", "true"]])
def test_client_commands_import_nothing_heavy(argv, tmp_path):
    # unreachable on purpose: the imports happen before any network I/O, and exit code 3 proves the command ran
    code = ("import sys, runpy; sys.argv = ['xce'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('xce.cli.main', run_name='__main__')\n"
            "except SystemExit as e:\n    code = e.code\n"
            f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith('xce.core'))\n"
            "print(code, heavy)")
    env = {"XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "t", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "3 []", out.stdout + out.stderr
