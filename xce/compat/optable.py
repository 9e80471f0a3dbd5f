"""A front-end's options declared once: read by its parser, printed by its ``--help``/``-h``,
rendered into its man page (:mod:`xce.cli.manpage`) and offered by shell completion
(:mod:`xce.cli.completion`), so that what a user is told and what the program takes cannot differ.

A row says how the option is written (Slurm: the long name and its letter, read by getopt's rules;
LSF: the word after its one dash), how it takes a value, a help line, and what it does on this
cluster: ``HONOUR`` (it works as in the real program), ``KEEP`` (accepted and kept with the job: it
cannot matter here), ``IGNORE`` (accepted, no effect here), ``REFUSE`` (the command is refused with
the reason). ``complete`` names the values a shell may offer for it: ``jobs``, ``queues`` (Slurm's
partitions), ``hosts``, ``users`` from the live cluster, ``file``, or a tuple of words; a program's
operands may also be a grammar, a dict from the words given so far to what follows
(``scontrol show job`` is followed by job ids).

Standard library only, and cheap to import: every status program's start pays for it.
"""

from __future__ import annotations

#: How a Slurm option takes its value (getopt's has_arg): none, always, or only as ``--o=V``.
NONE, REQUIRED, OPTIONAL = 0, 1, 2
HONOUR, KEEP, IGNORE, REFUSE = "honour", "keep", "ignore", "refuse"


class Flag:
    """One option of one program."""

    __slots__ = ("name", "short", "takes", "metavar", "help", "does", "complete")

    def __init__(self, name: str, short: str = "", takes: int = NONE, metavar: str = "", help: str = "",
                 does: str = HONOUR, complete=None):
        self.name, self.short, self.takes, self.metavar = name, short, takes, metavar
        self.help, self.does, self.complete = help, does, complete


class Program:
    """A front-end's declaration: its usage lines, a one-line summary, its options, what its
    operands are (``operand``: a metavar; ``complete``: what a shell offers for them), and the
    reason for each option it refuses (``refused``: name -> reason, the parser's own table)."""

    __slots__ = ("name", "system", "usage", "summary", "flags", "operand", "complete", "refused", "notes",
                 "single_dash")

    def __init__(self, name: str, system: str, usage: str, summary: str, flags, *, operand: str = "",
                 complete=None, refused: dict[str, str] | None = None, notes: str = "",
                 single_dash: bool | None = None):
        self.name, self.system, self.usage, self.summary = name, system, usage, summary
        #: Options written with one dash each (LSF's, and a few contributed Slurm tools like seff).
        self.single_dash = system == "lsf" if single_dash is None else single_dash
        self.flags = tuple(flags)
        self.operand, self.complete, self.refused, self.notes = operand, complete, dict(refused or {}), notes

    # -- what the parsers read ---------------------------------------------------------------
    def getopt(self) -> tuple[dict[str, int], dict[str, str]]:
        """Slurm: getopt's long names and letters."""
        return ({f.name: f.takes for f in self.flags}, {f.short: f.name for f in self.flags if f.short})

    def lsf(self) -> tuple[frozenset[str], frozenset[str]]:
        """LSF: the flags and the options that take a value, without their dash."""
        return (frozenset(f.name for f in self.flags if not f.takes),
                frozenset(f.name for f in self.flags if f.takes))

    # -- what users read ---------------------------------------------------------------------
    def status(self, flag: Flag) -> str:
        """What the option does here, in words, or "" when it does what the real program does."""
        reason = self.refused.get(flag.name)
        if reason is not None or flag.does == REFUSE:
            return f"refused here: {reason or flag.help}"
        if flag.does == KEEP:
            return "kept with the job, no effect here"
        if flag.does == IGNORE:
            return "accepted, no effect here"
        return ""

    def left(self, flag: Flag) -> str:
        """The option as its help line writes it: ``-p, --partition=partition`` or ``-q queue_name``."""
        if self.single_dash:
            return f"-{flag.name}" + (f" {flag.metavar or 'value'}" if flag.takes else "")
        value = flag.metavar or "value"
        arg = {NONE: "", REQUIRED: f"={value}", OPTIONAL: f"[={value}]"}[flag.takes]
        return (f"-{flag.short}, " if flag.short else "    ") + f"--{flag.name}{arg}"

    def right(self, flag: Flag) -> str:
        status = self.status(flag)
        return f"{flag.help} ({status})" if status and flag.help else (flag.help or status)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.left(f), self.right(f)) for f in self.flags]

    def help_text(self) -> str:
        """``--help`` as the real program prints it: the usage, then every option on a line."""
        lines = [self.usage.rstrip("\n"), ""]
        if self.single_dash:
            lines.append("Options:")
        width = 24 if self.single_dash else 32
        for left, right in self.rows():
            text = f"  {left}"
            lines.append(f"{text:<{width}}{right}" if len(text) < width else f"{text}\n{'':<{width}}{right}")
        if self.notes:
            lines += ["", self.notes]
        return "\n".join(lines) + "\n"

