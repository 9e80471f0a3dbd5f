"""Host features (Slurm's node features, LSF's boolean resources) and Slurm's ``--constraint`` grammar.

A feature is a word a host carries (``bigmem``, ``ib``, ``skylake``): given by the administrator in
``xce.toml`` or by the worker's ``--feature`` flag. In a ``select[]`` a feature reads as LSF reads a
boolean resource: ``select[bigmem]`` holds on the hosts that have it, ``select[!bigmem]`` on the
others. So a constraint is turned into the one expression language the core already evaluates
(``a&b`` is ``a && b``), and the core needs nothing new to place it: the host's features are part
of its values (``features``), looked up by name when a select mask is computed.

Slurm's grammar (sbatch(1), ``--constraint``)::

    expr := and ('|' and)*          OR
    and  := unit ('&' unit)*        AND (binds tighter than OR)
    unit := atom ['*' COUNT]        at least COUNT of the job's nodes have it
    atom := FEATURE | '(' expr ')' | '[' expr ']'   brackets: all nodes pick the same alternative

Counts and brackets say something about a *set* of hosts, which a per-host select cannot say. They
are parsed and reported (:attr:`Constraint.counts`, :attr:`Constraint.matching`) so the controller can
accept them where they mean exactly what the select means (brackets on a job of one host) and refuse
them elsewhere, instead of approximating.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xce.core.resreq.expr import Binary, Expr, Name

__all__ = ["Constraint", "ConstraintError", "FEATURE_RE", "feature_problem", "parse_constraint"]

#: A feature name: what the select language reads as one name (letters, digits and ``_``, not
#: starting with a digit), so that every feature can be written in a ``select[]`` too.
FEATURE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: Slurm's own message for a constraint it cannot read or no node can satisfy.
INVALID = "Invalid feature specification"


def feature_problem(name: str) -> str | None:
    """Why ``name`` cannot be a host feature, or None."""
    if not isinstance(name, str) or not FEATURE_RE.fullmatch(name):
        return (f"feature {name!r} is not a feature name: letters, digits and '_', not starting with a digit, "
                f"at most 64 characters")
    return None


class ConstraintError(ValueError):
    """A constraint that does not parse; the message starts with Slurm's words."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A parsed constraint: the per-host condition, and what of it concerns sets of hosts."""

    expr: Expr
    #: Every feature it names, in written order, each once.
    names: tuple[str, ...]
    #: ``(feature, count)`` for every ``FEATURE*COUNT``.
    counts: tuple[tuple[str, int], ...] = ()
    #: Whether a ``[...]`` (all nodes the same alternative) appears.
    matching: bool = False


def parse_constraint(text: str) -> Constraint:
    """Parse Slurm's ``--constraint`` text; :class:`ConstraintError` names what is wrong and where."""
    return _Parser(text).parse()


_TOKEN = re.compile(r"\s*(?:([A-Za-z0-9_.:-]+)|(\S))")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                break
            if m.group(1) is not None:
                self.tokens.append(("word", m.group(1), m.start(1)))
            elif m.group(2) is not None:
                self.tokens.append(("op", m.group(2), m.start(2)))
            pos = m.end()
        self.i = 0
        self.names: dict[str, None] = {}
        self.counts: list[tuple[str, int]] = []
        self.matching = False

    def error(self, what: str) -> ConstraintError:
        if self.i < len(self.tokens):
            kind, value, at = self.tokens[self.i]
            where = f"{value!r} at column {at + 1}"
        else:
            where = "the end"
        return ConstraintError(f"{INVALID}: {what}, found {where} in {self.text!r}")

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) and self.tokens[self.i][0] == "op" else None

    def parse(self) -> Constraint:
        if not self.tokens:
            raise ConstraintError(f"{INVALID}: the constraint is empty")
        expr = self.expr()
        if self.i < len(self.tokens):
            raise self.error("expected '&', '|' or the end")
        return Constraint(expr, tuple(self.names), tuple(self.counts), self.matching)

    def expr(self) -> Expr:
        left = self.conj()
        while self.peek() == "|":
            self.i += 1
            left = Binary("||", left, self.conj())
        return left

    def conj(self) -> Expr:
        left = self.unit()
        while self.peek() == "&":
            self.i += 1
            left = Binary("&&", left, self.unit())
        return left

    def unit(self) -> Expr:
        start = len(self.counts)
        atom, name = self.atom()
        if self.peek() == "*":
            self.i += 1
            if self.i >= len(self.tokens) or not self.tokens[self.i][1].isdigit():
                raise self.error("expected a node count after '*'")
            count = int(self.tokens[self.i][1])
            self.i += 1
            if count < 1:
                raise self.error("expected a node count of at least 1")
            del self.counts[start:]
            self.counts.append((name or str(atom), count))
        return atom

    def atom(self) -> tuple[Expr, str | None]:
        if self.i >= len(self.tokens):
            raise self.error("expected a feature, '(' or '['")
        kind, value, _ = self.tokens[self.i]
        if kind == "word":
            if feature_problem(value) is not None:
                raise self.error("expected a feature name (letters, digits and '_', not starting with a digit)")
            self.i += 1
            self.names.setdefault(value, None)
            return Name(value), value
        if value in "([":
            close = ")" if value == "(" else "]"
            self.i += 1
            inner = self.expr()
            if self.peek() != close:
                raise self.error(f"expected {close!r}")
            self.i += 1
            if value == "[":
                self.matching = True
            return inner, None
        raise self.error("expected a feature, '(' or '['")
