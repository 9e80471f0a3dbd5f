"""The parsed form of a resource requirement.

Everything here is a frozen, slotted dataclass with structural equality so that requests
can be compared, hashed and used as keys by the scheduling core, and so that a replay
that re-parses the same text gets an equal value.  ``str()`` of every node prints
canonical text that the parser reads back to an equal node; that is what makes a
request safe to store as text in the event log.

Memory amounts are bytes everywhere in this tree; the MiB default of the text form is a
property of the syntax only (see :mod:`xce.core.resreq`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from xce.core.quantity import format_quantity
from xce.core.resreq import select as _select
from xce.core.resreq.expr import Expr, Lookup, collect_names

__all__ = ["Compound", "Primary", "Request"]


def _always_true(lookup: Lookup) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Primary:
    """One homogeneous group of tasks and what each of its hosts must satisfy.

    ``rusage`` keeps the written order (it is what the user sees echoed back) and holds
    whole numbers only; memory amounts are bytes.  At most one of ``span_hosts`` (exactly
    that many hosts; 1: all tasks on one host) and ``span_ptile`` (tasks per host) is set.

    The compiled select/order closures are cached on the instance in two fields excluded
    from ``==``, ``hash`` and ``repr``: parse results are interned, so every job sharing
    a requirement text shares one compiled predicate, and the per-host fast path is one
    attribute read.  They are dropped on pickling (closures do not pickle) and rebuilt
    on first use.
    """

    tasks: int = 1
    select: Optional[Expr] = None
    order: tuple[Expr, ...] = ()
    rusage: tuple[tuple[str, int], ...] = ()
    span_hosts: Optional[int] = None
    span_ptile: Optional[int] = None
    #: Amounts reserved once on each host the primary uses, whatever its tasks there (``rusage[
    #: NAME=V/host]``: GPUs per host, as ``bsub -gpu num=N`` and ``sbatch --gres=gpu:N`` count them).
    rusage_host: tuple[tuple[str, int], ...] = ()
    _select_fn: Any = field(default=None, init=False, repr=False, compare=False, hash=False)
    _order_fn: Any = field(default=None, init=False, repr=False, compare=False, hash=False)

    # -- evaluation --------------------------------------------------------------------

    def evaluate_select(self, lookup: Lookup) -> bool:
        """Whether a host passes ``select``; ``lookup(name)`` returns None for names the host
        does not define.  See :mod:`xce.core.resreq.select` for the value semantics."""
        fn = self._select_fn
        if fn is None:
            fn = _always_true if self.select is None else _select.compile_predicate(self.select)
            object.__setattr__(self, "_select_fn", fn)
        return fn(lookup)

    def order_key(self, lookup: Lookup) -> tuple:
        """Sort key of one host for ``order``: ascending values of the order expressions, with
        undefined and non-numeric values as 0 so keys of different hosts always compare.
        Write ``order[-ut]`` for descending."""
        fn = self._order_fn
        if fn is None:
            fn = _select.compile_order(self.order)
            object.__setattr__(self, "_order_fn", fn)
        return fn(lookup)

    def select_names(self) -> tuple[str, ...]:
        """Sorted names the select expression reads (for deciding which host values matter)."""
        if self.select is None:
            return ()
        names: set[str] = set()
        collect_names(self.select, names)
        return tuple(sorted(names))

    def value_names(self) -> tuple[str, ...]:
        """Names whose values select and order read, in written order; ``defined(x)`` does not count,
        since asking whether a host defines ``x`` is meaningful for any ``x``."""
        names: dict[str, None] = {}
        for expr in ((self.select,) if self.select is not None else ()) + self.order:
            collect_names(expr, names, defined=False)
        return tuple(names)

    # -- convenience -------------------------------------------------------------------

    @property
    def span(self) -> Optional[tuple[str, int]]:
        if self.span_hosts is not None:
            return ("hosts", self.span_hosts)
        if self.span_ptile is not None:
            return ("ptile", self.span_ptile)
        return None

    def rusage_amount(self, name: str, default: int = 0) -> int:
        for rname, amount in self.rusage:
            if rname == name:
                return amount
        return default

    # -- text --------------------------------------------------------------------------

    def __str__(self) -> str:
        """The clauses only (no task count); see :meth:`Request.format`."""
        parts: list[str] = []
        if self.select is not None:
            parts.append(f"select[{self.select}]")
        if self.order:
            parts.append("order[" + ":".join(str(e) for e in self.order) + "]")
        if self.rusage or self.rusage_host:
            parts.append("rusage[" + ":".join([*(f"{n}={format_quantity(n, a)}" for n, a in self.rusage),
                                               *(f"{n}={format_quantity(n, a)}/host" for n, a in self.rusage_host)])
                         + "]")
        if self.span_hosts is not None:
            parts.append(f"span[hosts={self.span_hosts}]")
        if self.span_ptile is not None:
            parts.append(f"span[ptile={self.span_ptile}]")
        return " ".join(parts)

    # -- pickling: the cached closures cannot travel ------------------------------------

    def __getstate__(self):
        return (self.tasks, self.select, self.order, self.rusage, self.span_hosts, self.span_ptile, self.rusage_host)

    def __setstate__(self, state) -> None:
        names = ("tasks", "select", "order", "rusage", "span_hosts", "span_ptile", "rusage_host")
        object.__setattr__(self, "rusage_host", ())  # a state pickled before per-host amounts has six
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_select_fn", None)
        object.__setattr__(self, "_order_fn", None)


@dataclass(frozen=True, slots=True)
class Compound:
    """Primaries that must ALL be placed together (``2*{...} + 4*{...}``)."""

    primaries: tuple[Primary, ...]

    @property
    def total_tasks(self) -> int:
        return sum(p.tasks for p in self.primaries)

    def __str__(self) -> str:
        return " + ".join(f"{p.tasks}*{{{p}}}" for p in self.primaries)


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed requirement: alternatives, the first that can be placed wins.

    ``str(request)`` is canonical text for which ``parse_request(str(r), tasks) == r``:

    * with several primaries or alternatives every primary carries its task count as an
      explicit ``N*{...}``, so any ``tasks`` argument re-parses it;
    * a plain primary (kind PRIMARY) prints only its clauses, which is what users write
      and read; re-parse it with the same ``tasks`` (its own ``tasks``).  Use
      ``format(explicit_tasks=True)`` for text that carries the count by itself.
    """

    alternatives: tuple[Compound, ...]

    @property
    def kind(self) -> str:
        if len(self.alternatives) > 1:
            return "ALTER"
        if len(self.alternatives[0].primaries) > 1:
            return "COMPOUND"
        return "PRIMARY"

    @property
    def primaries(self) -> tuple[Primary, ...]:
        """The primaries of the first alternative (all of them for PRIMARY and COMPOUND)."""
        return self.alternatives[0].primaries

    @property
    def total_tasks(self) -> int:
        """Tasks of the first alternative."""
        return self.alternatives[0].total_tasks

    @property
    def min_tasks(self) -> int:
        """The fewest tasks any alternative needs: with fewer free slots nothing can fit."""
        return min(c.total_tasks for c in self.alternatives)

    @property
    def max_tasks(self) -> int:
        """The most tasks any alternative needs (an upper bound for admission checks)."""
        return max(c.total_tasks for c in self.alternatives)

    def format(self, *, explicit_tasks: bool = False) -> str:
        if self.kind == "PRIMARY" and not explicit_tasks:
            return str(self.alternatives[0].primaries[0])
        return " || ".join(str(c) for c in self.alternatives)

    def __str__(self) -> str:
        return self.format()

