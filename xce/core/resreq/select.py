"""Compiling select/order expressions into Python closures.

A scheduler evaluates one select expression for thousands of hosts per pass, so the tree
is turned once into nested closures (no per-host dispatch on node types) and the most
common shape, ``name OP constant``, gets a single specialised closure.

Value semantics, chosen so that a host that lacks a resource is simply not selected,
never an error:

* ``lookup(name)`` returning None means the host does not define ``name``: *undefined*.
* Any comparison with an undefined side is False - ``==`` **and** ``!=``.
* Numbers (``int``, ``float``, and ``bool`` as 0/1) compare numerically.
* Strings support only ``==`` and ``!=``; ``<``, ``>`` ... involving a string are False.
  A string compared with a number is unequal (``==`` False, ``!=`` True).
* Arithmetic (``+ - * /`` and unary ``-``) needs numbers on both sides; anything else,
  including an undefined side and division by zero, gives undefined.  ``/`` is true
  division.
* In boolean context (``&&``, ``||``, ``!`` and the whole expression) undefined is false,
  zero and the empty string are false, everything else is true.  Hence ``!linux`` holds
  on a host that does not define ``linux`` at all (as LSF treats boolean resources).
* ``defined(x)`` is True iff ``lookup(x)`` is not None.

The compiled closures are cached per :class:`~xce.core.resreq.ast.Expr` (equal trees
share one closure) in a bounded module-level dict, and on the owning Primary.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from .expr import COMPARISONS, Binary, Defined, Expr, Lookup, Name, Num, Str, Unary

__all__ = ["compile_order", "compile_predicate", "compile_value", "truthy"]

Predicate = Callable[[Lookup], bool]
ValueFn = Callable[[Lookup], Any]

_NUMBER = (int, float)  # bool is an int: True/False compare as 1/0
_ORDERING = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}

_CACHE_LIMIT = 100_000
_PREDICATES: dict[Expr, Predicate] = {}


def truthy(value: Any) -> bool:
    """Boolean reading of a value: undefined (None) is false."""
    return value is not None and bool(value)


def compile_predicate(expr: Expr) -> Predicate:
    """The closure ``lookup -> bool`` for a select expression (cached per equal tree)."""
    fn = _PREDICATES.get(expr)
    if fn is None:
        if len(_PREDICATES) >= _CACHE_LIMIT:
            _PREDICATES.clear()
        fn = _predicate(expr)
        _PREDICATES[expr] = fn
    return fn


def compile_value(expr: Expr) -> ValueFn:
    """The closure ``lookup -> value`` (number, string, bool or None for undefined)."""
    return _value(expr)


def compile_order(exprs: tuple[Expr, ...]) -> Callable[[Lookup], tuple]:
    """The closure ``lookup -> sort key`` for an order clause; non-numbers count as 0."""
    fns = tuple(_value(e) for e in exprs)

    def key(lookup: Lookup) -> tuple:
        out = []
        for fn in fns:
            v = fn(lookup)
            # NaN would make the key incomparable; strings would not compare with numbers.
            out.append(v if isinstance(v, _NUMBER) and v == v else 0)
        return tuple(out)

    return key


# -- value closures ---------------------------------------------------------------------


def _value(expr: Expr) -> ValueFn:
    t = type(expr)
    if t is Num or t is Str:
        const = expr.value
        return lambda lookup: const
    if t is Name:
        name = expr.name
        return lambda lookup: lookup(name)
    if t is Binary and expr.op in _ARITH:
        return _arith(expr)
    if t is Unary and expr.op == "-":
        inner = _value(expr.operand)

        def negate(lookup: Lookup) -> Any:
            v = inner(lookup)
            return -v if isinstance(v, _NUMBER) else None

        return negate
    # Boolean-valued nodes: comparisons, &&, ||, !, defined().
    return _predicate(expr)


def _arith(expr: Binary) -> ValueFn:
    op = _ARITH[expr.op]
    left, right = _value(expr.left), _value(expr.right)

    def arith(lookup: Lookup) -> Any:
        a = left(lookup)
        if not isinstance(a, _NUMBER):
            return None
        b = right(lookup)
        if not isinstance(b, _NUMBER):
            return None
        try:
            return op(a, b)
        except (ZeroDivisionError, OverflowError):
            return None

    return arith


# -- predicate closures -----------------------------------------------------------------


def _predicate(expr: Expr) -> Predicate:
    t = type(expr)
    if t is Binary:
        op = expr.op
        if op == "&&":
            left, right = _predicate(expr.left), _predicate(expr.right)
            return lambda lookup: left(lookup) and right(lookup)
        if op == "||":
            left, right = _predicate(expr.left), _predicate(expr.right)
            return lambda lookup: left(lookup) or right(lookup)
        if op in COMPARISONS:
            return _comparison(expr)
    elif t is Unary and expr.op == "!":
        inner = _predicate(expr.operand)
        return lambda lookup: not inner(lookup)
    elif t is Defined:
        name = expr.name
        return lambda lookup: lookup(name) is not None
    elif t is Name:
        name = expr.name

        def name_truthy(lookup: Lookup) -> bool:
            v = lookup(name)
            return v is not None and bool(v)

        return name_truthy
    elif t is Num or t is Str:
        const = bool(expr.value)
        return lambda lookup: const
    fn = _value(expr)
    return lambda lookup: truthy(fn(lookup))


def _comparison(expr: Binary) -> Predicate:
    op, left, right = expr.op, expr.left, expr.right
    # Fast path: ``name OP constant`` (and the mirror image), the shape of nearly every
    # real select; one closure, one lookup, no generic dispatch.
    if type(left) is Name and type(right) in (Num, Str):
        return _name_vs_const(op, left.name, right.value)
    if type(right) is Name and type(left) in (Num, Str):
        return _name_vs_const(_MIRROR[op], right.name, left.value)
    lfn, rfn = _value(left), _value(right)
    if op in ("==", "!="):
        want = op == "=="

        def equality(lookup: Lookup) -> bool:
            a = lfn(lookup)
            if a is None:
                return False
            b = rfn(lookup)
            if b is None:
                return False
            if isinstance(a, _NUMBER) != isinstance(b, _NUMBER):
                return not want
            return (a == b) == want

        return equality
    cmp = _ORDERING[op]

    def ordering(lookup: Lookup) -> bool:
        a = lfn(lookup)
        if not isinstance(a, _NUMBER):
            return False
        b = rfn(lookup)
        if not isinstance(b, _NUMBER):
            return False
        return cmp(a, b)

    return ordering


_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _name_vs_const(op: str, name: str, const: Any) -> Predicate:
    const_is_number = isinstance(const, _NUMBER)
    if op in ("==", "!="):
        want = op == "=="

        def name_equality(lookup: Lookup) -> bool:
            v = lookup(name)
            if v is None:
                return False
            if isinstance(v, _NUMBER) != const_is_number:
                return not want
            return (v == const) == want

        return name_equality
    if not const_is_number:
        return lambda lookup: False
    cmp = _ORDERING[op]

    def name_ordering(lookup: Lookup) -> bool:
        v = lookup(name)
        return isinstance(v, _NUMBER) and cmp(v, const)

    return name_ordering
