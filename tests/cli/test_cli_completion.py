"""Shell completion comes from the same declarations the parser reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from xce.cli import admin, main
from xce.cli.completion import DIRS, FILES, candidates


@pytest.mark.parametrize("done,current,expected", [
    ([], "su", ["submit", "suspend"]),
    ([], "co", ["controller", "config", "completion", "compat"]),
    (["sim"], "", ["run", "compare"]),
    (["submit"], "--q", ["--queue"]),
    (["submit", "-q", "x"], "--q", []),            # given once already
    (["submit", "--env", "A=1"], "--en", ["--env"]),  # repeatable
    (["submit", "--cwd"], "", [DIRS]),
    (["submit", "-o"], "o", [FILES]),
    (["submit", "--", "ls"], "-", [FILES]),        # the job's own words
    (["submit", "sleep"], "--", [FILES]),
    (["controller", "--log-level"], "w", []),      # choices are upper case
    (["controller", "--log-level"], "W", ["WARNING"]),
    (["completion"], "", ["bash", "zsh", "fish"]),
    (["config", "check"], "--no", ["--no-plugins"]),
    (["scheduler", "--sim"], "", [FILES]),
    (["jobs", "-q", "normal"], "-l", []),
    (["jobs"], "--l", ["--long"]),
    (["nosuch"], "", []),
])
def test_candidates(done, current, expected):
    assert candidates(main.XCE, done, current) == expected


def test_admin_candidates():
    assert candidates(admin.XCEADMIN, ["scheduler", "record"], "") == ["start", "stop"]
    assert candidates(admin.XCEADMIN, ["user", "add", "ann"], "--a") == ["--admin"]


def test_bash_script_completes_through_the_installed_command():
    xce = Path(sys.executable).parent / "xce"
    script = subprocess.run([str(xce), "completion", "bash"], capture_output=True, text=True, check=True).stdout
    probe = (script + f"\nCOMP_WORDS=({xce} submit --qu); COMP_CWORD=2; _xce_complete; "
             "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
             f"COMP_WORDS=({xce} sim ''); COMP_CWORD=2; _xce_complete; printf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["--queue", "run", "compare"], out.stdout + out.stderr
