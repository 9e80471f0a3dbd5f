"""Manual pages rendered from the declarations ``--help`` prints, so that ``man`` cannot drift from
what a command takes: ``xce.1`` and ``xceadmin.1`` from :mod:`xce.cli.spec`, and one page for each
LSF and Slurm front-end (``sbatch.1``, ``bjobs.1`` ...) from its option table
(:mod:`xce.compat.optable`), each option marked as the front-end treats it here.

``python -m xce.cli.manpage [DIR]`` (``make man``) writes every page into DIR (``build/man``
unless given). The pages are build output, never committed. ``xce compat install`` writes them
where ``man`` finds them (:func:`install`): man-db looks in ``../share/man`` of each directory on
PATH, so the front-ends' pages go beside their launchers' directory and ``xce``'s beside its
``bin`` (docs/compat.md).

Each page has every command that ``--help`` lists (groups walked to their leaves, ``xce sim run``
under its full name), with its usage line, help text, arguments, options by section, and
examples. Hidden commands and options stay out, as they do in ``--help``.
"""

from __future__ import annotations

import os
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


def _header(name: str, summary: str) -> list[str]:
    from xce import __version__

    return [f".TH {name.upper()} 1 \"\" \"{name} (XCE {escape(__version__)})\" \"XCE Manual\"",
            ".SH NAME", f"{name} \\- {escape(summary)}"]


_DOES = {"slurm": "Slurm's", "lsf": "IBM Spectrum LSF's"}


def render_front_end(table) -> str:
    """One front-end's page from its option table (:class:`xce.compat.optable.Program`)."""
    from xce.compat.programs import LSF, SLURM

    name, system = table.name, table.system
    lines = [*_header(name, f"{table.summary} (XCE's {name})"), ".SH SYNOPSIS", ".nf",
             escape(table.usage.removeprefix("Usage: ")), ".fi", ".SH DESCRIPTION",
             ".PP", escape(f"This {name} is XCE's: it reads {_DOES[system]} {name} command line and answers from "
                          "the XCE cluster, in the real program's words and layout, so that scripts and workflow "
                          "tools written for it run unchanged."),
             ".PP", escape("Every option the real program has is listed. One marked (accepted, no effect here) "
                           "or (kept with the job, no effect here) is taken and cannot change anything on this "
                           "cluster; one marked (refused here) ends the command with the reason, and nothing is "
                           "done. Any other option works as in the real program."),
             ".SH OPTIONS"]
    for left, right in table.rows():
        lines += _item(left, right)
    if table.notes:
        lines += [".SH NOTES", ".nf", escape(table.notes), ".fi"]
    lines += [".SH EXIT STATUS", ".PP",
              escape("0 when done; 1 (Slurm) or 255 (LSF) when the command line is wrong, a job is not found, "
                     "the cluster refused or could not be reached, as the real program exits.")]
    others = sorted(n for n in (SLURM if system == "slurm" else LSF) if n != name)
    lines += [".SH SEE ALSO", ", ".join(f"\\fB{escape(p)}\\fR(1)" for p in ("xce", *others))]
    return "\n".join(lines) + "\n"


def front_end_pages() -> dict[str, str]:
    """Each LSF and Slurm front-end's page, by its file name."""
    from xce.compat.manual import of
    from xce.compat.programs import PROGRAMS

    return {f"{name}.1": render_front_end(of(name)) for name in PROGRAMS}


def xce_pages() -> dict[str, str]:
    from xce.cli.admin import XCEADMIN
    from xce.cli.main import XCE

    return {f"{p.name}.1": render(p, (other,)) for p, other in ((XCE, "xceadmin"), (XCEADMIN, "xce"))}


def _write(out: Path, pages: dict[str, str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file, text in pages.items():
        path = out / file
        if not path.exists() or path.read_text(encoding="utf-8", errors="replace") != text:
            tmp = path.with_name(f".{file}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        written.append(path)
    return written


def write(directory: str | Path = DEFAULT_DIR) -> list[Path]:
    """Every page (xce, xceadmin and each front-end) into one directory."""
    return _write(Path(directory), {**xce_pages(), **front_end_pages()})


def install(launchers: str) -> list[Path]:
    """The pages where ``man`` finds them: the front-ends' in ``../share/man/man1`` of the launchers'
    directory, xce's and xceadmin's in ``share/man/man1`` of this installation (man-db maps each
    ``bin`` on PATH to ``../share/man``)."""
    beside = Path(launchers).resolve().parent / "share" / "man" / "man1"
    ours = Path(sys.prefix) / "share" / "man" / "man1"
    return _write(beside, front_end_pages()) + _write(ours, xce_pages())


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.stderr.write("usage: python -m xce.cli.manpage [DIR]  (default: build/man)\n")
        raise SystemExit(2)
    for path in write(args[0] if args else DEFAULT_DIR):
        print(path)


if __name__ == "__main__":
    main()
