"""``--help`` text, rendered from a command's declaration (:mod:`xce.cli.spec`).

Imported only when help is asked for, so the commands people run in loops never pay for it.
Options are listed under their ``section`` (``Options`` when none), in declaration order; each
line shows every flag, the value's name, the help text and, where useful, the default, the
allowed range or the choices.
"""

from __future__ import annotations

import os
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # spec imports this module to answer --help, so only the type checker reads spec here
    from xce.cli.spec import Arg, Command, Group, Opt

INDENT = 2


def width() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size().columns
        except OSError:
            columns = 100
    return max(60, min(columns, 120))


def _paragraphs(text: str, cols: int) -> str:
    out = []
    for para in text.strip().split("\n\n"):
        if para.startswith("\b\n"):  # pre-formatted, as click's marker
            out.append(para[2:])
        else:
            out.append(textwrap.fill(" ".join(para.split()), cols))
    return "\n\n".join(out)


def _rows(rows: list[tuple[str, str]], cols: int, left_w: int | None = None) -> list[str]:
    """Two aligned columns; the right one wraps, a long left one gets its own line."""
    if not rows:
        return []
    if left_w is None:
        left_w = min(max(len(a) for a, _ in rows), 30)
    right_w = max(cols - INDENT - left_w - 2, 30)
    lines = []
    for a, b in rows:
        wrapped = textwrap.wrap(b, right_w) or [""]
        if len(a) > left_w:
            lines.append(" " * INDENT + a)
            lines += [" " * (INDENT + left_w + 2) + w for w in wrapped]
        else:
            lines.append(" " * INDENT + a.ljust(left_w) + "  " + wrapped[0])
            lines += [" " * (INDENT + left_w + 2) + w for w in wrapped[1:]]
    return [line.rstrip() for line in lines]


def _option_left(o: Opt) -> str:
    flags = ", ".join((*o.flags, *o.negate))
    return flags if o.is_flag else f"{flags} {o.metavar}"


def _option_right(o: Opt) -> str:
    text = o.help.strip()
    notes = []
    if o.choices:
        notes.append("one of: " + ", ".join(o.choices))
    if o.min is not None and o.max is not None:
        notes.append(f"{o.min} to {o.max}")
    elif o.min is not None:
        notes.append(f"at least {o.min}")
    elif o.max is not None:
        notes.append(f"at most {o.max}")
    if o.show_default and not o.required and o.default not in (None, "", False) and not o.stores_const:
        notes.append(f"default: {o.default}")
    if o.env:
        notes.append(f"env {o.env}")
    if o.multiple:
        notes.append("repeatable")
    if o.required:
        notes.append("required")
    return f"{text} [{'; '.join(notes)}]" if notes else text


def _examples(examples: tuple[str, ...]) -> list[str]:
    if not examples:
        return []
    return ["", "Examples:", *(" " * INDENT + e for e in examples)]


def option_sections(cmd: Command) -> dict[str, list[tuple[str, str]]]:
    """The command's visible options by section, as ``(flags, text)`` rows: for ``--help`` and the
    manual pages alike (:mod:`xce.cli.manpage`)."""
    sections: dict[str, list[tuple[str, str]]] = {"Options": []}
    for o in cmd.options:
        if not o.hidden:
            sections.setdefault(o.section or "Options", []).append((_option_left(o), _option_right(o)))
    if cmd.help_flags:
        sections["Options"].append((", ".join(cmd.help_flags), "Show this help and exit."))
    return sections


def command(cmd: Command, prog: str) -> str:
    cols = width()
    lines = [f"Usage: {cmd.usage_line(prog)}", "", _paragraphs(cmd.help, cols)]
    blocks: list[tuple[str, list[tuple[str, str]]]] = []
    if cmd.args:
        blocks.append(("Arguments", [(a.metavar + ("..." if a.many else ""), _arg_right(a)) for a in cmd.args]))
    blocks += list(option_sections(cmd).items())
    left_w = min(max(len(a) for _, rows in blocks for a, _ in rows), 30)
    for title, rows in blocks:
        lines += ["", f"{title}:"] + _rows(rows, cols, left_w)
    if cmd.epilog:
        lines += ["", _paragraphs(cmd.epilog, cols)]
    lines += _examples(cmd.examples)
    return "\n".join(lines) + "\n"


def _arg_right(a: Arg) -> str:
    text = a.help.strip()
    if a.choices:
        text += f" [one of: {', '.join(a.choices)}]"
    if not a.required:
        text += " [optional]"
    return text


def group(grp: Group, prog: str) -> str:
    cols = width()
    lines = [f"Usage: {prog} COMMAND [ARGS]...", "", _paragraphs(grp.help, cols), "", "Commands:"]
    rows = [(name, node.summary()) for name, node in grp.children().items() if not node.hidden]
    lines += _rows(rows, cols)
    lines += ["", "Options:"] + _rows([("-h, --help", "Show this help and exit.")]
                                      + ([("--version", "Print the version and exit.")] if prog.count(" ") == 0
                                         and hasattr(grp, "modules") else []), cols)
    lines += _examples(grp.examples)
    lines += ["", f"Run '{prog} COMMAND --help' for a command's options."]
    return "\n".join(lines) + "\n"
