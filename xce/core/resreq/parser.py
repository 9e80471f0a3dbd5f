"""Recursive-descent parser for LSF-style resource requirement strings.

See :mod:`xce.core.resreq` for the grammar.  Design points:

* Parsing is interned: the same ``(text, tasks)`` returns the same :class:`Request`
  object, so thousands of jobs with one requirement share one tree and one compiled
  select, and identity comparison is a valid fast path for callers.
* Numbers are exact rationals until the final value is known; the MiB default of the
  memory resources is applied to the literal's exact value, never to a rounded float.
* Nesting and expression depth are bounded, so that no input - however hostile - can
  raise anything but :class:`RequestSyntaxError` (no RecursionError from parsing,
  printing or compiling), and number sizes are bounded so printing can never hit
  Python's int/str conversion limit.
"""

from __future__ import annotations

from typing import NoReturn, Optional

from xce.core.quantity import MAX_QUANTITY, MIB, QUANTITY_EXPECTED, quantity_fraction, rational_value, whole_expected
from xce.core.resources.naming import MEMORY_RESOURCES, ResourceNameError, validate_resource_name

from .ast import Compound, Primary, Request
from .expr import WORD_NAMES, Binary, Defined, Expr, Name, Num, Str, Unary
from .lexer import (
    DIGITS,
    DOMAIN_NAME_RE,
    HOSTNAME_RE,
    IDENT_RE,
    INT_RE,
    NUMBER_RE,
    NUMBER_TAIL,
    RUSAGE_NAME_RE,
    STRING_RE,
    WS_RE,
    RequestSyntaxError,
    describe_token,
)

__all__ = ["MAX_EXPR_DEPTH", "MAX_NESTING", "parse_request"]

MAX_NESTING = 32  # parentheses, braces and chained unary operators
MAX_EXPR_DEPTH = 64  # height of one expression tree
MAX_DIGITS = 1100  # per integer or fraction part of a literal
_VALUE_LIMIT = 10**1000  # |whole values| stay below this so printing stays parseable

_CACHE_LIMIT = 100_000
_CACHE: dict[tuple[str, int], Request] = {}

_CLAUSES = ("select", "order", "rusage", "span")
#: LSF's rusage keywords that are not resources, refused by name: a reservation that ends after
#: ``duration`` minutes (``decay=1``: shrinking to nothing over them) would need the core to release
#: charges by the clock. It needs no release here: a running job is charged max(reserved, used)
#: (resource-accounting.md), so once it uses what it reserved it is counted once, not twice.
_LSF_RUSAGE_KEYWORDS = {
    keyword: ("a reservation lasts the whole run, and a job that uses what it reserved is charged once "
              "(max of reserved and used); remove duration= and decay=, and reserve what the job needs")
    for keyword in ("duration", "decay")}
_CLAUSE_EXPECTED = "a clause (select, order, rusage or span)"
_OPERAND_EXPECTED = 'a number, a name or "("'
_COMPARISON_OPS = ("==", "!=", "<=", ">=", "<", ">")
_WORD_END = ("]", ")", "&&", "||", ":", ",")


def parse_request(text: str, tasks: int = 1) -> Request:
    """Parse ``text`` into a :class:`Request`; ``tasks`` is the count of every primary
    written without ``N*{...}``.  Identical arguments return the identical object.

    Raises :class:`RequestSyntaxError` for any unusable text, and ValueError/TypeError
    for a ``tasks`` that is not a positive int (a caller bug, not a user's typo).
    """
    key = (text, tasks)
    cached = _CACHE.get(key)
    if cached is not None and type(tasks) is int:
        return cached
    if not isinstance(text, str):
        raise TypeError(f"resource requirement must be a str, not {type(text).__name__}")
    if type(tasks) is not int:
        raise TypeError(f"tasks must be an int, not {type(tasks).__name__}")
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, not {tasks}")
    request = _Parser(text, tasks).parse()
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    return _CACHE.setdefault(key, request)


class _Parser:
    __slots__ = ("text", "pos", "end", "tasks", "nesting", "bare", "depths")

    def __init__(self, text: str, tasks: int) -> None:
        self.text = text
        self.pos = 0
        self.end = len(text)
        self.tasks = tasks
        self.nesting = 0
        # id(Num) -> (node, numerator, denominator) for literals written without a unit:
        # only those get the MiB default next to a memory name.  The node is kept so its
        # id cannot be reused while parsing.
        self.bare: dict[int, tuple[Num, int, int]] = {}
        # id(node) -> (node, height) for Unary/Binary nodes (leaves have height 1).
        self.depths: dict[int, tuple[Expr, int]] = {}

    # -- helpers ---------------------------------------------------------------------

    def error(self, expected: str, pos: Optional[int] = None, found: Optional[str] = None) -> NoReturn:
        at = self.pos if pos is None else pos
        shown = describe_token(self.text, at) if found is None else f'"{found}"'
        raise RequestSyntaxError(self.text, at + 1, expected, shown)

    def skip(self) -> None:
        self.pos = WS_RE.match(self.text, self.pos).end()

    def peek(self, token: str) -> bool:
        return self.text.startswith(token, self.pos)

    def expect(self, token: str, expected: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.pos):
            self.error(expected)
        self.pos += len(token)

    def next_is(self, chars: frozenset[str] | str) -> bool:
        return self.pos < self.end and self.text[self.pos] in chars

    def enter(self) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            self.error(f"less nesting (at most {MAX_NESTING} levels)")

    def leave(self) -> None:
        self.nesting -= 1

    # -- request structure -----------------------------------------------------------

    def parse(self) -> Request:
        self.skip()
        if self.pos == self.end:
            return Request((Compound((Primary(self.tasks),)),))
        if self.next_is("{") or self.next_is(DIGITS):
            alternatives = [Compound(tuple(self.parse_terms()))]
            while True:
                self.skip()
                if not self.peek("||"):
                    break
                self.pos += 2
                alternatives.append(Compound(tuple(self.parse_terms())))
            if self.pos < self.end:
                self.error('"||", "+" or end of text')
            return Request(tuple(alternatives))
        # A bare list of clauses is only allowed as the whole request.
        primary = self.parse_clauses(self.tasks)
        if self.pos < self.end:
            self.error(f"{_CLAUSE_EXPECTED} or end of text")
        return Request((Compound((primary,)),))

    def parse_terms(self) -> list[Primary]:
        primaries = self.parse_term()
        while True:
            self.skip()
            if not self.peek("+"):
                return primaries
            self.pos += 1
            primaries.extend(self.parse_term())

    def parse_term(self) -> list[Primary]:
        self.skip()
        start = self.pos
        multiplier: Optional[int] = None
        m = INT_RE.match(self.text, self.pos)
        if m:
            if len(m.group()) > MAX_DIGITS:
                self.error("a smaller task count", start)
            multiplier = int(m.group())
            if multiplier < 1:
                self.error("a task count of at least 1", start)
            self.pos = m.end()
            self.expect("*", '"*" after the task count')
            self.expect("{", '"{"')
        elif self.peek("{"):
            self.pos += 1
        else:
            self.error('"{" or a task count such as 2*{')
        self.enter()
        self.skip()
        if self.next_is("{") or self.next_is(DIGITS):
            if multiplier is not None:
                self.error(f"{_CLAUSE_EXPECTED} (a task count applies to one primary, not to a nested group)")
            primaries = self.parse_terms()
            self.expect("}", '"+" or "}"')
        else:
            primaries = [self.parse_clauses(self.tasks if multiplier is None else multiplier)]
            self.expect("}", f'{_CLAUSE_EXPECTED} or "}}"')
        self.leave()
        return primaries

    # -- clauses ---------------------------------------------------------------------

    def parse_clauses(self, tasks: int) -> Primary:
        select: Optional[Expr] = None
        order: tuple[Expr, ...] = ()
        rusage: tuple[tuple[str, int], ...] = ()
        per_host: tuple[tuple[str, int], ...] = ()
        span_hosts: Optional[int] = None
        span_ptile: Optional[int] = None
        seen: list[str] = []
        while True:
            self.skip()
            m = IDENT_RE.match(self.text, self.pos)
            if not m:
                break
            word = m.group()
            if word not in _CLAUSES:
                self.error(_CLAUSE_EXPECTED)
            if word in seen:
                self.error(f'no second "{word}" clause in one primary')
            seen.append(word)
            self.pos = m.end()
            self.expect("[", f'"[" after {word}')
            if word == "select":
                select = self.parse_expr()
                self.expect("]", 'an operator or "]"')
            elif word == "order":
                order = self.parse_order()
            elif word == "rusage":
                rusage, per_host = self.parse_rusage()
            else:
                span_hosts, span_ptile = self.parse_span(tasks)
        return Primary(tasks, select, order, rusage, span_hosts, span_ptile, per_host)

    def parse_order(self) -> tuple[Expr, ...]:
        keys = [self.parse_expr()]
        while True:
            self.skip()
            if self.peek(":") or self.peek(","):
                self.pos += 1
                keys.append(self.parse_expr())
            elif self.peek("]"):
                self.pos += 1
                return tuple(keys)
            else:
                self.error('an operator, ":" or "]"')

    def parse_rusage(self) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
        """The amounts per task, and those per host (``NAME=V/host``, LSF's reservation method in the
        rusage string, 10.1.0.9: one V on each host the job uses, whatever its tasks there);
        ``V/task`` is the default."""
        items: list[tuple[str, int]] = []
        per_host: list[tuple[str, int]] = []
        while True:
            self.skip()
            start = self.pos
            m = RUSAGE_NAME_RE.match(self.text, self.pos)
            if not m:
                self.error("a resource name")
            name = m.group()
            if name in _LSF_RUSAGE_KEYWORDS:
                self.error(f"a resource name (rusage {name}= is not supported: {_LSF_RUSAGE_KEYWORDS[name]})",
                           start, name)
            try:
                # Requests may consume xce.io/ resources; only defining them is reserved.
                validate_resource_name(name, allow_reserved=True)
            except ResourceNameError as exc:
                self.error(f"a valid resource name ({exc})", start, name)
            if any(name == n for n, _ in (*items, *per_host)):
                self.error("a resource not already in this rusage (one amount per resource)", start, name)
            self.pos = m.end()
            self.expect("=", '"="')
            self.skip()
            amount = self.parse_quantity(name)
            self.skip()
            method = "task"
            if self.peek("/"):
                self.pos += 1
                self.skip()
                at = self.pos
                m = IDENT_RE.match(self.text, self.pos)
                if not m or m.group() not in ("task", "host"):
                    self.error('"task" or "host" (the amount is per task or per host)', at)
                method = m.group()
                self.pos = m.end()
                self.skip()
            (per_host if method == "host" else items).append((name, amount))
            if self.peek(":") or self.peek(","):
                self.pos += 1
            elif self.peek("]"):
                self.pos += 1
                return tuple(items), tuple(per_host)
            else:
                self.error('":", "," or "]"')

    def parse_quantity(self, name: str) -> int:
        start = self.pos
        if self.peek("-"):
            self.error("a non-negative quantity")
        m = NUMBER_RE.match(self.text, self.pos)
        if not m:
            self.error(QUANTITY_EXPECTED)
        self.number(m)
        if self.pos < self.end and self.text[self.pos] in "+-":
            self.error(QUANTITY_EXPECTED)  # "1-2", "4G+1": not a quantity, as on every other surface
        num, den = quantity_fraction(name, *m.groups())
        if num % den:
            self.error(whole_expected(name), start, m.group())
        amount = num // den
        if amount > MAX_QUANTITY:
            self.error("a smaller number", start, m.group())
        return amount

    def parse_span(self, tasks: int) -> tuple[Optional[int], Optional[int]]:
        """``span[hosts=N]`` (exactly N hosts, ``ceil(tasks / N)`` tasks on each but the last, as
        ``sbatch -N``; only an N that this spread really fills) or ``span[ptile=p]``."""
        self.skip()
        m = IDENT_RE.match(self.text, self.pos)
        if not m or m.group() not in ("hosts", "ptile"):
            self.error('"hosts" or "ptile"')
        key = m.group()
        self.pos = m.end()
        self.expect("=", '"="')
        self.skip()
        start = self.pos
        expected = "a whole number of at least 1"
        if key == "hosts":
            fits = [k for k in range(1, min(tasks, 8) + 1) if -(-tasks // -(-tasks // k)) == k]
            expected = "1" if tasks == 1 else (f"a host count that {tasks} tasks fill evenly, "
                                               f"such as {', '.join(map(str, fits))}")
        m = INT_RE.match(self.text, self.pos)
        if not m or len(m.group()) > MAX_DIGITS or self._tail_at(m.end()):
            self.error(expected)
        value = int(m.group())
        if value < 1 or (key == "hosts" and (value > tasks or -(-tasks // -(-tasks // value)) != value)):
            self.error(expected, start)
        self.pos = m.end()
        self.expect("]", '"]"')
        return (value, None) if key == "hosts" else (None, value)

    # -- numbers ---------------------------------------------------------------------

    def _tail_at(self, pos: int) -> bool:
        return pos < self.end and self.text[pos] in NUMBER_TAIL

    def number(self, m) -> tuple[int, int, Optional[str]]:
        """Exact (numerator, denominator, unit) of the literal matched by NUMBER_RE."""
        int_part, frac_part, unit = m.groups()
        frac_part = frac_part or ""
        if len(int_part) > MAX_DIGITS or len(frac_part) > MAX_DIGITS:
            self.error(f"a number of at most {MAX_DIGITS} digits")
        if self._tail_at(m.end()):
            self.error(QUANTITY_EXPECTED)
        self.pos = m.end()
        num, den = quantity_fraction("", int_part, frac_part, unit, in_expression=True)
        return num, den, unit

    def make_value(self, num: int, den: int, start: int) -> int | float:
        try:
            value = rational_value(num, den)
        except OverflowError:
            self.error("a smaller number", start)
        if isinstance(value, int) and abs(value) >= _VALUE_LIMIT:
            self.error("a smaller number", start)
        return value

    # -- expressions -----------------------------------------------------------------

    def parse_expr(self) -> Expr:
        return self.parse_or()

    def binary(self, op: str, left: Expr, right: Expr) -> Binary:
        height = 1 + max(self.height(left), self.height(right))
        if height > MAX_EXPR_DEPTH:
            self.error(f"a simpler expression (at most {MAX_EXPR_DEPTH} levels)")
        node = Binary(op, left, right)
        self.depths[id(node)] = (node, height)
        return node

    def height(self, node: Expr) -> int:
        entry = self.depths.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else 1

    def parse_or(self) -> Expr:
        left = self.parse_and()
        while True:
            self.skip()
            if not self.peek("||"):
                return left
            self.pos += 2
            left = self.binary("||", left, self.parse_and())

    def parse_and(self) -> Expr:
        left = self.parse_comparison()
        while True:
            self.skip()
            if not self.peek("&&"):
                return left
            self.pos += 2
            left = self.binary("&&", left, self.parse_comparison())

    def parse_comparison(self) -> Expr:
        left = self.parse_additive()
        while True:
            self.skip()
            op = next((o for o in _COMPARISON_OPS if self.peek(o)), None)
            if op is None:
                return left
            self.pos += len(op)
            right = self.parse_word() if type(left) is Name and left.name in WORD_NAMES else None
            if right is None:
                right = self.parse_additive()
            # LSF habit: a unit-less number compared directly with a memory resource is MiB.
            if type(left) is Name and left.name in MEMORY_RESOURCES:
                right = self.scaled(right)
            elif type(right) is Name and right.name in MEMORY_RESOURCES:
                left = self.scaled(left)
            left = self.binary(op, left, right)

    def parse_word(self) -> Optional[Str]:
        """A bare word after ``hname ==`` (``vm-w1``) or ``type ==`` (``X86_64``) as a string; None when
        a number, a quoted string or an expression follows instead."""
        self.skip()
        m = HOSTNAME_RE.match(self.text, self.pos)
        if m is None or NUMBER_RE.fullmatch(m.group()) is not None:
            return None
        after = WS_RE.match(self.text, m.end()).end()
        if after < self.end and not self.text.startswith(_WORD_END, after):
            return None  # an expression after all: "hname == a + b", "hname == example.com/x"
        self.pos = m.end()
        return Str(m.group())

    def scaled(self, node: Expr) -> Expr:
        entry = self.bare.get(id(node))
        if entry is None or entry[0] is not node:
            return node
        return Num(self.make_value(entry[1] * MIB, entry[2], self.pos))

    def parse_additive(self) -> Expr:
        left = self.parse_multiplicative()
        while True:
            self.skip()
            if self.peek("+") or self.peek("-"):
                op = self.text[self.pos]
                self.pos += 1
                left = self.binary(op, left, self.parse_multiplicative())
            else:
                return left

    def parse_multiplicative(self) -> Expr:
        left = self.parse_unary()
        while True:
            self.skip()
            if self.peek("*") or self.peek("/"):
                op = self.text[self.pos]
                self.pos += 1
                left = self.binary(op, left, self.parse_unary())
            else:
                return left

    def parse_unary(self) -> Expr:
        self.skip()
        if self.peek("!") and not self.peek("!="):
            op = "!"
        elif self.peek("-"):
            op = "-"
        else:
            return self.parse_primary()
        self.pos += 1
        self.enter()
        operand = self.parse_unary()
        self.leave()
        if op == "-" and type(operand) is Num:
            # Fold so that "-5" is the literal -5 (and stays bare for the MiB default).
            folded = Num(-operand.value)
            entry = self.bare.get(id(operand))
            if entry is not None and entry[0] is operand:
                self.bare[id(folded)] = (folded, -entry[1], entry[2])
            return folded
        height = 1 + self.height(operand)
        if height > MAX_EXPR_DEPTH:
            self.error(f"a simpler expression (at most {MAX_EXPR_DEPTH} levels)")
        node = Unary(op, operand)
        self.depths[id(node)] = (node, height)
        return node

    def parse_primary(self) -> Expr:
        self.skip()
        start = self.pos
        if self.pos >= self.end:
            self.error(_OPERAND_EXPECTED)
        text = self.text
        char = text[self.pos]
        if char == "(":
            self.pos += 1
            self.enter()
            inner = self.parse_or()
            self.expect(")", 'an operator or ")"')
            self.leave()
            return inner
        if char == '"':
            m = STRING_RE.match(text, self.pos)
            if not m:
                self.error('a closing \'"\' for this string')
            self.pos = m.end()
            return Str(_unescape(m.group(1)))
        m = DOMAIN_NAME_RE.match(text, self.pos)
        if m:
            self.pos = m.end()
            return Name(m.group())
        m = NUMBER_RE.match(text, self.pos)
        if m:
            num, den, unit = self.number(m)
            if unit is not None:
                return Num(self.make_value(num, den, start))
            node = Num(self.make_value(num, den, start))
            self.bare[id(node)] = (node, num, den)
            return node
        m = IDENT_RE.match(text, self.pos)
        if m:
            self.pos = m.end()
            if m.group() == "defined":
                after = self.pos
                self.skip()
                if self.peek("("):
                    self.pos += 1
                    self.skip()
                    name = self.parse_name()
                    self.expect(")", '")"')
                    return Defined(name)
                self.pos = after  # a resource that happens to be called "defined"
            return Name(m.group())
        self.error(_OPERAND_EXPECTED)

    def parse_name(self) -> str:
        m = DOMAIN_NAME_RE.match(self.text, self.pos) or IDENT_RE.match(self.text, self.pos)
        if not m:
            self.error("a resource name")
        self.pos = m.end()
        return m.group()


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)
