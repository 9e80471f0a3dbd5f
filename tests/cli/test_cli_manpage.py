"""``make man``: xce.1 and xceadmin.1 list every command and every option the declaration has, and
groff renders them without a warning (the pages a site installs must not be broken roff)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from xce.cli import admin, main
from xce.cli.manpage import commands, escape

PROGRAMS = {"xce": (main.XCE, main.COMMANDS), "xceadmin": (admin.XCEADMIN, admin.COMMANDS)}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("man")
    done = subprocess.run([sys.executable, "-m", "xce.cli.manpage", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert {"xce.1", "xceadmin.1", "sbatch.1", "bsub.1"} <= {p.name for p in out.iterdir()}
    return out


def _sections(text: str) -> dict[str, str]:
    """Each command's part of a page, by the words that run it."""
    out = {}
    for part in text.split("\n.SS ")[1:]:
        title, _, body = part.partition("\n")
        out[title.strip('"').replace("\\-", "-")] = body
    return out


@pytest.mark.parametrize("name", PROGRAMS)
def test_pages_list_every_command_and_option(pages, name):
    program, registry = PROGRAMS[name]
    sections = _sections((pages / f"{name}.1").read_text())
    # Every registered command, a group by each of its commands.
    for word in registry:
        assert any(s == f"{name} {word}" or s.startswith(f"{name} {word} ") for s in sections), word
    missing = []
    for prog, cmd in commands(program):
        body = sections.get(prog)
        if body is None:
            missing.append(prog)
            continue
        for opt in cmd.options:
            if opt.hidden:
                continue
            missing += [f"{prog} {flag}" for flag in (*opt.flags, *opt.negate) if escape(flag) not in body]
        missing += [f"{prog} {a.metavar}" for a in cmd.args if escape(a.metavar) not in body]
    assert not missing, missing
    assert "xce pools" in sections and "xce shares" in sections or name == "xceadmin"


@pytest.mark.parametrize("name", PROGRAMS)
def test_groff_renders_the_pages_without_warnings(pages, name):
    done = subprocess.run(["groff", "-ww", "-man", "-Tutf8", str(pages / f"{name}.1")], capture_output=True,
                          timeout=60)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()
    text = re.sub(".\b", "", done.stdout.decode())  # grotty's bold and underline are overstrikes
    assert f"{name.upper()}(1)" in text and "COMMANDS" in text and "SEE ALSO" in text
