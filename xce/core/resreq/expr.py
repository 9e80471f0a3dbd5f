"""The expressions of ``select[]`` and ``order[]``: names, numbers, words and operators.

Apart from the request that holds them (:mod:`xce.core.resreq.ast`) because both the request and the
compiler of expressions (:mod:`xce.core.resreq.select`) need them, and the request needs the
compiler: with the nodes in the request's module the two imported each other. Every node is a frozen,
slotted dataclass whose ``str()`` is canonical text the parser reads back to an equal node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

from xce.core.quantity import format_bytes, format_number
from xce.core.resources.naming import MEMORY_RESOURCES

#: Names whose values are words (LSF's built-in string resources): what they are compared with is
#: read as a word (``hname==vm-w1``, ``type==X86_64``), not as a name or a subtraction.
WORD_NAMES = frozenset({"hname", "type", "model", "gpu_model"})

# lookup(name) -> the host's value for ``name``, or None when the host does not define it.
Lookup = Callable[[str], Any]

COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
# Higher binds tighter; unary ! and - bind tighter than any binary operator.
PRECEDENCE: dict[str, int] = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 3,
    "<=": 3,
    ">": 3,
    ">=": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
}


class Expr:
    """Base of the select/order expression nodes (for ``isinstance`` and annotations)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Num(Expr):
    """A number; memory literals are already converted to bytes."""

    value: Union[int, float]

    def __str__(self) -> str:
        return format_number(self.value)


@dataclass(frozen=True, slots=True)
class Str(Expr):
    value: str

    def __str__(self) -> str:
        return '"' + self.value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, slots=True)
class Name(Expr):
    """A host value looked up by name: a builtin, a plain identifier or DOMAIN/NAME."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Defined(Expr):
    """``defined(name)``: whether the host has a value for ``name`` at all."""

    name: str

    def __str__(self) -> str:
        return f"defined({self.name})"


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    """``!x`` or ``-x``.  The parser folds ``-`` applied to a literal into a negative
    :class:`Num`, so ``Unary("-", Num(...))`` never comes out of it."""

    op: str
    operand: Expr

    def __str__(self) -> str:
        text = str(self.operand)
        if isinstance(self.operand, Binary):
            text = f"({text})"
        return self.op + text


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        # Parenthesize only where precedence or left-associativity needs it, so the
        # canonical text stays readable yet parses back to this exact tree.
        prec = PRECEDENCE[self.op]
        left, right = self.left, self.right
        if self.op in COMPARISONS:
            left_text = _side_text(left, right, prec, False)
            right_text = _side_text(right, left, prec, True)
            if type(left) is Name and left.name in WORD_NAMES and type(right) is Name:
                right_text = f"({right_text})"  # a bare word there is a word, not a Name
        else:
            left_text = _child_text(left, prec, False)
            right_text = _child_text(right, prec, True)
        return f"{left_text} {self.op} {right_text}"


def _child_text(node: Expr, prec: int, is_right: bool) -> str:
    text = str(node)
    if isinstance(node, Binary):
        child = PRECEDENCE[node.op]
        if child < prec or (is_right and child == prec):
            return f"({text})"
    return text


def _side_text(node: Expr, other: Expr, prec: int, is_right: bool) -> str:
    # A bare number compared with a memory resource reads as MiB, so a byte value in that
    # position must carry an explicit unit to mean the same thing after re-parsing.
    if type(node) is Num and type(other) is Name and other.name in MEMORY_RESOURCES:
        return format_bytes(node.value)
    return _child_text(node, prec, is_right)


def collect_names(expr: Expr, out: set[str] | dict[str, None], defined: bool = True) -> None:
    if isinstance(expr, Name) or (defined and isinstance(expr, Defined)):
        if isinstance(out, dict):
            out[expr.name] = None
        else:
            out.add(expr.name)
    elif isinstance(expr, Unary):
        collect_names(expr.operand, out, defined)
    elif isinstance(expr, Binary):
        collect_names(expr.left, out, defined)
        collect_names(expr.right, out, defined)
