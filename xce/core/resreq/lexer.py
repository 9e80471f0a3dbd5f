"""Token patterns and the syntax error for resource requirement strings.

The grammar is context sensitive at the token level - ``example.com/gpu`` is one name
inside ``select[...]`` but ``mem/2`` is a division, and a rusage name may contain
characters an expression name may not - so there is no separate token stream: the
parser matches these patterns at its current position, in the order the context needs.
All patterns are ASCII-only on purpose (``\\d`` would accept Arabic-Indic digits).
"""

from __future__ import annotations

import re

from xce.core.quantity import HOSTNAME_RE, NUMBER_RE

__all__ = [
    "DIGITS",
    "DOMAIN_NAME_RE",
    "HOSTNAME_RE",
    "IDENT_RE",
    "INT_RE",
    "NUMBER_RE",
    "RUSAGE_NAME_RE",
    "RequestSyntaxError",
    "STRING_RE",
    "WS_RE",
    "describe_token",
]

DIGITS = frozenset("0123456789")
WS_RE = re.compile(r"\s*")
INT_RE = re.compile(r"[0-9]+")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# A dot before the slash makes it a resource name; the first label must hold a letter so
# that ``1.5/2`` stays a division of numbers.
DOMAIN_NAME_RE = re.compile(rf"(?=[A-Za-z0-9-]*[A-Za-z])(?:{_LABEL})(?:\.{_LABEL})+/{_PART}")
# Deliberately loose: the name is then checked by the naming rules, whose messages are
# more helpful than "unexpected character".
RUSAGE_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")
STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
# Characters that may not follow a number directly (``4Gb``, ``1.5.2``, ``3x``).
NUMBER_TAIL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")

_FOUND_RE = re.compile(
    r'[0-9]+(?:\.[0-9]+)?[A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_./-]*|"(?:[^"\\]|\\.)*"?|\|\||&&|==|!=|<=|>=|.',
    re.S,
)
_FOUND_MAX = 40


def describe_token(text: str, pos: int) -> str:
    """How the token at ``pos`` is shown in an error: quoted, or ``end of text``."""
    if pos >= len(text):
        return "end of text"
    m = _FOUND_RE.match(text, pos)
    token = m.group() if m else text[pos]
    if len(token) > _FOUND_MAX:
        token = token[:_FOUND_MAX] + "..."
    return f'"{token}"'


class RequestSyntaxError(ValueError):
    """The one error for a requirement string that cannot be used, whatever the reason.

    ``column`` is 1-based and points at the first character of the offending token, so
    front ends can draw a caret under it; ``expected`` says what would have been accepted
    there.  Rule violations that are not strictly syntax (a fractional GPU count, a
    malformed resource name, ``span[hosts=2]``) are reported the same way because to the
    user they are all "this text is wrong here".
    """

    def __init__(self, text: str, column: int, expected: str, found: str) -> None:
        super().__init__(f'resource requirement "{text}" column {column}: expected {expected} but found {found}')
        self.text = text
        self.column = column
        self.expected = expected
        self.found = found

    def __reduce__(self):
        return (type(self), (self.text, self.column, self.expected, self.found))
