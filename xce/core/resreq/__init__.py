"""LSF-style resource requirement strings: parsing, canonical printing, host selection.

Grammar (whitespace is allowed between tokens; keywords are lowercase)::

    request  := alt | clauses                      (bare clauses only as the whole request)
    alt      := compound ('||' compound)*          (alternatives: first placeable wins)
    compound := term ('+' term)*                   (all primaries placed together)
    term     := [INT '*'] '{' (clauses | compound) '}'
    clauses  := ( select[EXPR]
                | order[EXPR ((':'|',') EXPR)*]
                | rusage[NAME=QTY ((':'|',') NAME=QTY)*]
                | span[hosts=1] | span[ptile=N] )*  (each kind at most once, any order)

A term without ``N*`` gets the ``tasks`` argument of :func:`parse_request`; ``N*`` may
not be put on a nested ``{compound}``.  Empty text is one primary without clauses.

Expressions: numbers (``12``, ``1.5``, optional unit ``K M G T`` = powers of 1024),
double-quoted strings (``\\`` escapes the next character), names, ``defined(name)``,
``!`` and unary ``-``, ``* /``, ``+ -``, comparisons ``== != < <= > >=``, ``&&``,
``||`` (binding from tightest to loosest), and parentheses.  A name with a dot before
its slash is a domain-prefixed resource name (``example.com/gpu``, ``xce.io/cpu-milli``);
without one the slash divides (``mem/2``).  A resource name may contain ``-``, so write
``example.com/gpu - 1`` with spaces to subtract.

Units.  Memory (``mem``, ``maxmem``, ``swp``) is bytes in the parsed form.  In
``rusage`` a memory amount without a unit is MiB (``mem=4000`` is 4000 MiB, ``mem=4G``
4 GiB, ``mem=0.5G`` 512 MiB); in ``select``/``order`` a number literal without a unit
that is directly one side of a comparison whose other side is directly a memory name
is MiB (``mem > 4000``); ``-`` and parentheses around the literal do not change that, any
arithmetic does (``mem > 2*1000`` compares with 2000 bytes).  A literal with a unit is
always bytes.  For every other resource a unit simply multiplies (``1K`` = 1024).
rusage amounts must come out as whole non-negative numbers (of bytes for memory); a
select literal may be fractional.

Evaluation semantics for hosts that do not define a name are in
:mod:`xce.core.resreq.select`: comparisons with an undefined value are False (``!=``
included), arithmetic with it is undefined, and undefined is false in boolean context.
"""

from .ast import Compound, Primary, Request
from .expr import Binary, Defined, Expr, Name, Num, Str, Unary
from .lexer import RequestSyntaxError
from .parser import parse_request

__all__ = [
    "Binary",
    "Compound",
    "Defined",
    "Expr",
    "Name",
    "Num",
    "Primary",
    "Request",
    "RequestSyntaxError",
    "Str",
    "Unary",
    "parse_request",
]
