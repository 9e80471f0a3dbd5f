"""The documentation points at things that exist.

* Every relative Markdown link in ``docs/`` and ``README.md`` names an existing file (and, for
  ``file.md#anchor``, an existing heading).
* Every ``xce``/``xceadmin`` command shown in a code block of the guides is a registered command,
  or one listed below as planned; in ``docs/user-guide.md`` its options must exist too.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md")) + [REPO / "README.md"]
GUIDES = [DOCS / n for n in ("index.md", "quickstart.md", "user-guide.md", "resource-requirements.md",
                             "admin-guide.md", "plugin-guide.md", "architecture.md")]

#: Commands the guides describe before they exist (other engineers are writing them).
PLANNED_XCE: set[str] = set()
PLANNED_XCEADMIN: set[str] = set()

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_INLINE_CODE = re.compile(r"`[^`]*`")


def _prose_lines(text: str):
    """(line number, line) outside fenced code blocks, with inline code removed."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            inside = not inside
            continue
        if not inside:
            yield n, _INLINE_CODE.sub("", line)


def _code_blocks(text: str) -> list[tuple[str, list[str]]]:
    blocks, lang, current, inside = [], "", [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            if inside:
                blocks.append((lang, current))
                inside = False
            else:
                inside, lang, current = True, line.strip().strip("`~").strip(), []
            continue
        if inside:
            current.append(line)
    return blocks


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out: set[str] = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug, n = _slug(m.group(1)), 1
            while slug in out:  # duplicates get -1, -2, ...
                slug = f"{_slug(m.group(1))}-{n}"
                n += 1
            out.add(slug)
    return out


def _links(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [(n, m.group(1)) for n, line in _prose_lines(text) for m in _LINK.finditer(line)]


def test_pages_exist() -> None:
    for page in GUIDES:
        assert page.is_file(), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for n, target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{page.relative_to(REPO)}:{n}: {target} -> {dest} does not exist")
            continue
        if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{page.relative_to(REPO)}:{n}: {target}: no heading with anchor #{anchor} in {dest.name}")
    assert not broken, "\n".join(broken)


def test_link_checker_sees_links() -> None:
    """Guard against a regex that silently matches nothing."""
    assert (REPO / "docs/admin-guide.md").is_file()
    targets = [t for _, t in _links(DOCS / "index.md")]
    assert "user-guide.md" in targets and "reference/configuration.md" in targets


# -- commands ----------------------------------------------------------------------------------

def _command_lines(page: Path) -> list[list[str]]:
    """Words of every shell line in a code block that runs ``xce``/``xceadmin``."""
    out = []
    for lang, lines in _code_blocks(page.read_text(encoding="utf-8")):
        if lang not in ("", "sh", "shell", "bash", "console", "text"):
            continue
        for line in lines:
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:]
            line = re.sub(r"^(\.venv/bin/|\./)", "", line)
            if not re.match(r"^xce(admin)? +(-|[a-z][a-z-]*( |$))", line):
                continue  # prose or a diagram that starts with the word, not a command line
            words = shlex.split(line, comments=True)
            for stop in ("&&", "&", "|", ";"):  # only the first command of a pipeline or list
                if stop in words:
                    words = words[:words.index(stop)]
            out.append(words)
    return out


def _apps():
    from xce.cli import admin, main

    return {
        "xce": (main.COMMANDS, PLANNED_XCE, main.XCE),
        "xceadmin": (admin.COMMANDS, PLANNED_XCEADMIN, admin.XCEADMIN),
    }


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_documented_commands_exist(page: Path) -> None:
    apps = _apps()
    missing = []
    for words in _command_lines(page):
        commands, planned, _ = apps[words[0]]
        sub = words[1] if len(words) > 1 else ""
        if sub.startswith("-"):
            continue
        if sub not in commands and sub not in planned:
            missing.append(" ".join(words))
    assert not missing, f"{page.name} shows commands that are neither registered nor planned: {missing}"


def _declared_command(words: list[str]):
    """The declared command a documented line runs, and the words after its name."""
    commands, planned, program = _apps()[words[0]]
    if words[1] in planned:
        return None, []
    node, rest = program, words[1:]
    while rest and hasattr(node, "children") and node.child(rest[0]) is not None:
        node, rest = node.child(rest[0]), rest[1:]
    return node, rest


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_documented_options_exist(page: Path) -> None:
    """``xce submit -q ... --array ...``: every option shown is one the command takes."""
    unknown = []
    for words in _command_lines(page):
        if len(words) < 2 or words[1].startswith("-"):
            continue
        cmd, rest = _declared_command(words)
        if cmd is None or not hasattr(cmd, "options"):
            continue
        flags = {f for o in cmd.options for f in (*o.flags, *o.negate)} | {"-h", "--help"}
        for word in rest:
            if word == "--":
                break
            if word.startswith("-") and not re.match(r"^-\d", word):
                flag = word.split("=", 1)[0]
                if flag not in flags:
                    unknown.append(f"{' '.join(words)}: {flag}")
    assert not unknown, "options the commands do not take:\n" + "\n".join(unknown)
