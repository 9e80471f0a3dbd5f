"""The user guide's examples of refusals, run: each block after a sentence that states an exit code
("(exit code 1):", "with exit status 2:") holds ``$ command`` lines, each followed by what the
command prints; the command must print exactly that and exit with the stated code."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from xce.client.launch import start_controller

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "user-guide.md"
STATED = re.compile(r"\((?:exit code|exit status) (\d)\):\s*\n\s*\n```\w*\n(.*?)```|with exit status (\d):\s*\n\s*\n```\w*\n(.*?)```",
                    re.S)


def examples() -> list[tuple[int, str, str]]:
    found = []
    for m in STATED.finditer(GUIDE.read_text()):
        code, block = (int(m.group(1)), m.group(2)) if m.group(1) else (int(m.group(3)), m.group(4))
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                out = []
                for follow in lines[i + 1:]:
                    if follow.startswith("$ "):
                        break
                    out.append(follow)
                found.append((code, line[2:], "\n".join(out)))
    return found


def test_the_guide_states_exit_codes_for_its_refusals():
    codes = {code for code, _, _ in examples()}
    assert codes >= {1, 2}, examples()  # both kinds: the command line's and the controller's


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    ctl = start_controller(tmp_path_factory.mktemp("docs-exit"))
    yield ctl
    ctl.stop()


@pytest.mark.parametrize("code,command,printed", examples(), ids=[e[1] for e in examples()])
def test_each_example_prints_what_the_guide_shows_and_exits_as_it_says(controller, code, command, printed):
    argv = shlex.split(command)
    assert argv[0] in ("xce", "xceadmin")
    module = {"xce": "xce.cli.main", "xceadmin": "xce.cli.admin"}[argv[0]]
    env = {"PATH": "/usr/bin:/bin", "XCE_URL": controller.url, "XCE_TOKEN": controller.user_token(), "XCE_RETRY_S": "0"}
    r = subprocess.run([sys.executable, "-m", module, *argv[1:]], capture_output=True, text=True, env=env,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert (r.stdout + r.stderr).strip() == printed.strip()
