"""Text for people: aligned tables, and other users' text made safe to print (the rule, times
and sizes are :mod:`xce.formats`).

Tables go through rich when stdout is a terminal (colours, wrapping to the width); when piped
they are plain aligned columns, which ``grep``/``awk`` read and which costs no rich import in
the commands people loop over.
"""

from __future__ import annotations

import sys

from xce.formats import printable  # noqa: F401  (the one escaping rule; commands import it from here)

TYPE_CHECKING = False
if TYPE_CHECKING:  # for annotations only: typing would cost every client command its imports (re, ...)
    from typing import Any, Sequence


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
