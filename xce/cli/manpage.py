"""``xce.1`` and ``xceadmin.1``: manual pages rendered from the same declaration as ``--help``
(:mod:`xce.cli.spec`), so a site's ``man xce`` cannot drift from what the commands take.

``python -m xce.cli.manpage [DIR]`` (``make man``) writes both pages into DIR (``build/man``
unless given). The pages are build output, never committed: a release or a site's package runs
this and installs them under ``share/man/man1`` (docs/admin-guide.md).

Each page has every command that ``--help`` lists (groups walked to their leaves, ``xce sim run``
under its full name), with its usage line, help text, arguments, options by section, and
examples. Hidden commands and options stay out, as they do in ``--help``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from xce.cli.helptext import _arg_right, option_sections
from xce.cli.spec import Command, Group, Program

DEFAULT_DIR = "build/man"


def escape(text: str) -> str:
    """Text as roff reads it literally: backslashes, minus signs, and a leading dot or quote."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line for line in out.split("\n"))


def _paragraphs(text: str) -> list[str]:
    out = []
    for para in text.strip().split("\n\n"):
        if para.startswith("\b\n"):  # pre-formatted in --help: kept as it is
            out += [".PP", ".nf", escape(para[2:]), ".fi"]
        else:
            out += [".PP", escape(" ".join(para.split()))]
    return out


def _item(left: str, right: str) -> list[str]:
    return [".TP", f"\\fB{escape(left)}\\fR", escape(right) if right else "\\&"]


def _command(cmd: Command, prog: str) -> list[str]:
    lines = [f".SS \"{escape(prog)}\"", ".PP", f"\\fB{escape(cmd.usage_line(prog))}\\fR"]
    lines += _paragraphs(cmd.help)
    if cmd.args:
        lines += [".PP", "Arguments:", ".RS"]
        for a in cmd.args:
            lines += _item(a.metavar + ("..." if a.many else ""), _arg_right(a))
        lines += [".RE"]
    for title, rows in option_sections(cmd).items():
        if rows:
            lines += [".PP", f"{escape(title)}:", ".RS"]
            for left, right in rows:
                lines += _item(left, right)
            lines += [".RE"]
    if cmd.epilog:
        lines += _paragraphs(cmd.epilog)
    if cmd.examples:
        lines += [".PP", "Examples:", ".RS", ".nf", *(escape(e) for e in cmd.examples), ".fi", ".RE"]
    return lines


def _walk(node: Command | Group, prog: str) -> list[tuple[str, Command]]:
    """Every visible command under ``node``, with the words that run it."""
    if isinstance(node, Command):
        return [(prog, node)]
    out = []
    for name, child in node.children().items():
        if not child.hidden:
            out += _walk(child, f"{prog} {name}")
    return out


def commands(program: Program) -> list[tuple[str, Command]]:
    return _walk(program, program.name)


def render(program: Program, see_also: tuple[str, ...] = ()) -> str:
    from xce import __version__

    name = program.name
    lines = [f".TH {name.upper()} 1 \"\" \"{name} {escape(__version__)}\" \"XCE Manual\"",
             ".SH NAME", f"{name} \\- {escape(program.summary())}",
             ".SH SYNOPSIS", f".B {name}", ".I COMMAND", "[\\fIARGS\\fR]...",
             ".SH DESCRIPTION", *_paragraphs(program.help)[1:],
             ".PP", f"Every command takes \\fB\\-h\\fR/\\fB\\-\\-help\\fR; \\fB{name} \\-\\-version\\fR prints "
             "the version. Exit status: 0 done, 1 refused or failed, 2 a usage error, 3 the controller "
             "could not be reached.",
             ".SH COMMANDS"]
    for prog, cmd in commands(program):
        lines += _command(cmd, prog)
    if program.examples:
        lines += [".SH EXAMPLES", ".nf", *(escape(e) for e in program.examples), ".fi"]
    if see_also:
        lines += [".SH SEE ALSO", ", ".join(f"\\fB{escape(p)}\\fR(1)" for p in see_also)]
    return "\n".join(lines) + "\n"


def write(directory: str | Path = DEFAULT_DIR) -> list[Path]:
    from xce.cli.admin import XCEADMIN
    from xce.cli.main import XCE

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for program, other in ((XCE, "xceadmin"), (XCEADMIN, "xce")):
        path = out / f"{program.name}.1"
        path.write_text(render(program, (other,)), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write("usage: python -m xce.cli.manpage [DIR]  (default: build/man)\n")
        raise SystemExit(2)
    for path in write(args[0] if args else DEFAULT_DIR):
        print(path)


if __name__ == "__main__":
    main()
