"""Command lines as Slurm's programs read them: glibc ``getopt_long``, with its messages.

Clients write ``--opt=V`` and ``--opt V``, shortened long options (``--parsab``), bundled letters
(``-nu ann``, ``-n4``), and they parse what the program prints when it refuses: so the rules and
the words are getopt's (``unrecognized option '--x'``, ``invalid option -- 'z'``), prefixed by the
program's name, then Slurm's ``Try "PROG --help" for more information``, exit 1.
"""

from __future__ import annotations

import sys

#: How an option takes its value: none, always (``--o V`` or ``--o=V``), or only as ``--o=V``.
NONE, REQUIRED, OPTIONAL = 0, 1, 2


class UsageError(Exception):
    """A command line getopt refuses; the message is getopt's, without the program name."""


def parse(argv: list[str], longs: dict[str, int], shorts: dict[str, str], *,
          stop_at_operand: bool = False) -> tuple[list[tuple[str, str | None]], list[str]]:
    """``argv`` as (long option name, value) pairs in order, and the operands.

    ``shorts`` maps a letter to its long name (which ``longs`` must hold). With ``stop_at_operand``
    the first operand ends the options (POSIXLY_CORRECT, as sbatch and srun read theirs: what follows
    the script or command is its own); otherwise operands may come between options. ``--`` ends them."""
    found: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            operands += argv[i:]
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            full = _long(name, longs)
            kind = longs[full]
            if kind == NONE:
                if eq:
                    raise UsageError(f"option '--{full}' doesn't allow an argument")
                found.append((full, None))
            elif kind == OPTIONAL:
                found.append((full, value if eq else None))
            elif eq:
                found.append((full, value))
            elif i < len(argv):
                found.append((full, argv[i]))
                i += 1
            else:
                raise UsageError(f"option '--{full}' requires an argument")
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                letter = word[j]
                j += 1
                if letter not in shorts:
                    raise UsageError(f"invalid option -- '{letter}'")
                full = shorts[letter]
                kind = longs[full]
                if kind == NONE:
                    found.append((full, None))
                    continue
                rest = word[j:]
                if rest or kind == OPTIONAL:
                    found.append((full, rest or None))
                elif i < len(argv):
                    found.append((full, argv[i]))
                    i += 1
                else:
                    raise UsageError(f"option requires an argument -- '{letter}'")
                break
        else:
            operands.append(word)
            if stop_at_operand:
                operands += argv[i:]
                break
    return found, operands


def _long(name: str, longs: dict[str, int]) -> str:
    """getopt's rule: an exact name, else the one name it begins."""
    if name in longs:
        return name
    matches = [full for full in longs if full.startswith(name)] if name else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        return _ambiguous(name, matches)
    raise UsageError(f"unrecognized option '--{name}'")


def _ambiguous(name: str, matches: list[str]) -> str:
    raise UsageError(f"option '--{name}' is ambiguous; possibilities: " + " ".join(f"'--{m}'" for m in matches))


def refuse(prog: str, message: str) -> int:
    """getopt's line and Slurm's hint on stderr; Slurm's exit status for a bad command line."""
    sys.stderr.write(f"{prog}: {message}\nTry \"{prog} --help\" for more information\n")
    return 1


def error(prog: str, message: str, code: int = 1) -> int:
    """Slurm's error line, ``PROG: error: MESSAGE``, and the exit status."""
    sys.stderr.write(f"{prog}: error: {message}\n")
    return code
