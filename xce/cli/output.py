"""Text for people: aligned tables, times and sizes.

Tables go through rich when stdout is a terminal (colours, wrapping to the width); when piped
they are plain aligned columns, which ``grep``/``awk`` read and which costs no rich import in
the commands people loop over.
"""

from __future__ import annotations

import sys
import time



def printable(text: str, keep: str = "") -> str:
    """``text`` with every control or format character (ESC, CR, BEL, C1 controls, bidi overrides...)
    shown as its escape (``\\x1b``): job names, commands and types are other users' text, and on
    a terminal raw escapes would be obeyed (retitle it, hide lines, fake output). ``keep`` lists the
    ones left as they are (the newlines of a multi-line form)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def when(ns: int | None) -> str:
    if not ns:
        return "-"
    t = ns / 1e9
    fmt = "%H:%M:%S" if time.time() - t < 86400 else "%b %d %H:%M"
    return time.strftime(fmt, time.localtime(t))


def stamp(ns: int | None) -> str:
    if not ns:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ns / 1e9)) + f".{(ns // 1_000_000) % 1000:03d}"


def size(n: Any) -> str:
    """Bytes for people, through the one quantity formatter (``4G``, ``1.5G``, ``512B``)."""
    if not isinstance(n, (int, float)) or isinstance(n, bool):
        return str(n)
    from xce.core.quantity import human_quantity

    return human_quantity("", n, memory=True)


def placement(items: list[dict[str, Any]]) -> str:
    return " ".join(f"{p['tasks']}*{p['host']}" if p["tasks"] > 1 else p["host"] for p in items) or "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[printable(str(c)) for c in row] for row in rows]
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        t = Table(box=None, pad_edge=False, header_style="bold")
        for h in headers:
            t.add_column(h, overflow="fold")
        for row in cells:  # as Text: a job name or command "x [bold]" is shown, not read as markup
            t.add_row(*(Text(c) for c in row))
        Console().print(t)
        return
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(c))
    lines = []
    for row in [list(headers)] + cells:
        lines.append("  ".join(c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)).rstrip())
    sys.stdout.write("\n".join(lines) + "\n")
