"""Every command's --help shows examples (issue: "--help everywhere with examples")."""

import pytest
from typer.testing import CliRunner

from xce.cli import admin, main

GROUPS = {"config": ["check"], "sim": ["run"], "user": ["add"], "token": ["create", "list", "revoke"], "scheduler": [],
          "reconfig": [], "db": ["current", "upgrade"]}


def help_texts(commands: dict[str, str], prog: str):
    runner = CliRunner()
    for name in sorted(set(commands)):
        app = main.build(commands, [name], prog, "test")
        paths = [[name, sub] for sub in GROUPS.get(name, [])] or [[name]]
        if name == "scheduler" and prog == "xceadmin":
            paths = [["scheduler", "record", "start"]]
        for path in paths:
            result = runner.invoke(app, [*path, "--help"])
            yield " ".join(path), result


@pytest.mark.parametrize("prog,commands", [("xce", main.COMMANDS), ("xceadmin", admin.COMMANDS)])
def test_every_command_has_examples_in_its_help(prog, commands):
    missing = []
    for path, result in help_texts(commands, prog):
        assert result.exit_code == 0, (path, result.output)
        if "Examples:" not in result.output and "Example" not in result.output:
            missing.append(path)
    assert missing == []
