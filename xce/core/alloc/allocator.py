"""Allocation for one job: PRIMARY through the plan and host iterators, COMPOUND as all-or-nothing
over its primaries, ALTER as the first compound that fully allocates.

Charges are applied to the cluster columns as each primary is placed, so a later primary of the
same compound sees what the earlier ones took (the spec's "uncommitted" term), and are undone
exactly on failure: a failed compound leaves no residue.

Exclusive jobs (``bsub -x``, ``sbatch --exclusive``) are placed as Slurm places them: only on
hosts where no job holds a slot when their allocation starts (a job suspended there has given its
slots back and does not count; a job whose host stopped reporting still holds them and does), and
they are CHARGED every slot of each host they use (``Allocation.claim``), not just their tasks. So
the host reads full to everything that counts free slots, with no second mechanism: no other job
fits there, backfilling and reservations see its slots come back only when it ends, a suspended
job there cannot be resumed (its slots are not free), and a preemptor may take the whole host by
suspending it. The tasks stay the placement the worker starts; ``xce hosts`` in the core's terms
shows the host full. The primaries of one exclusive compound may share hosts with each other.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable

import numpy as np

from xce.core.alloc.hosts import host_iter
from xce.core.alloc.plans import plan_iter
from xce.core.cluster import Cluster
from xce.core.decisions import PendReason
from xce.core.reasons import format_quantity, make_pend_reason
from xce.core.session import Session

#: ``ndarray.sum`` without its Python wrapper (asked once per parallel job a round looks at).
_total = np.add.reduce
_first, _second = itemgetter(0), itemgetter(1)


@dataclass(slots=True)
class Allocation:
    """Every charge made for one job, in order, so it can be kept or rolled back as one."""

    slots: list[tuple[int, int]] = field(default_factory=list)
    charges: list[tuple[int, str, int]] = field(default_factory=list)
    pool: list[tuple[str, int]] = field(default_factory=list)
    #: An exclusive job's slots beyond its tasks on each of its hosts: (host index, slots).
    claim: list[tuple[int, int]] = field(default_factory=list)
    #: (host indexes, tasks) as int64 arrays of each primary placed on several hosts, made to charge
    #: them: the ledger records a wide job's hosts from these rather than converting its slots again.
    arrays: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def mark(self) -> tuple[int, int, int]:
        return len(self.slots), len(self.charges), len(self.pool)


class Allocator:
    __slots__ = ("cluster", "session", "cancelled")

    def __init__(self, cluster: Cluster, session: Session, cancelled: Callable[[], bool]) -> None:
        self.cluster = cluster
        self.session = session
        self.cancelled = cancelled

    # -- composition ---------------------------------------------------------------------
    def allocate(self, request: Any, exclusive: bool = False) -> tuple[Allocation | None, list[Any]]:
        """Try every alternative; return the allocation, or None and where each one failed:
        ``(compound, index of the primary that failed)``, for ``why``.

        ``exclusive``: only on hosts that hold no slot now, each then charged whole (module docstring).
        """
        failed: list[Any] = []
        empty = self.empty_hosts() if exclusive else None
        for compound in request.alternatives:
            alloc = Allocation()
            bad = self._compound(compound, alloc, empty)
            if bad < 0:
                if empty is not None:
                    self._claim(alloc)
                return alloc, []
            failed.append((compound, bad))
            if self.cancelled():
                break
        return None, failed

    def place(self, job: Any) -> tuple[Allocation | None, list[Any]]:
        """``allocate`` for a job: its request, exclusive when the job is."""
        if job.exclusive:
            return self.allocate(job.request, True)
        return self.allocate(job.request)

    def why(self, job: Any, failed: tuple[Any, int]) -> PendReason:
        """``explain`` for where a job's compound failed, exclusive when the job is.

        A primary after the first is explained with the ones before it placed again, as they were
        when it failed: alone, ``{rusage[mem=2G]} + 2*{rusage[mem=4G]}`` on a 4-slot 8G host has
        room for its second part, and what is short is the memory the first part took.
        """
        compound, index = failed
        primary = compound.primaries[index]
        exclusive = bool(job.exclusive)
        if not index:
            return self.explain(primary, exclusive)
        alloc = Allocation()
        empty = self.empty_hosts() if exclusive else None
        try:
            for earlier in compound.primaries[:index]:
                if not self._primary(earlier, alloc, empty):
                    self.rollback(alloc)
                    return self.explain(primary, exclusive)
            return self.explain(primary, exclusive, after=index)
        finally:
            self.rollback(alloc)

    def empty_hosts(self) -> np.ndarray:
        """Hosts on which no job holds a slot: where an exclusive job may start."""
        return self.cluster.inuse("slots") == 0

    def _claim(self, alloc: Allocation) -> None:
        """Charge the rest of every slot of each host an exclusive allocation uses."""
        cluster = self.cluster
        total = cluster.total("slots")
        placed: dict[int, int] = {}
        for i, t in alloc.slots:
            placed[i] = placed.get(i, 0) + t
        for i in sorted(placed):
            rest = int(total[i]) - placed[i]
            if rest > 0:
                cluster.charge(i, "slots", rest)
                alloc.claim.append((i, rest))

    def _compound(self, compound: Any, alloc: Allocation, empty: np.ndarray | None = None) -> int:
        """-1 when every primary is placed, else the index of the one that failed (all rolled back)."""
        for index, primary in enumerate(compound.primaries):
            if not self._primary(primary, alloc, empty):
                self.rollback(alloc)
                return index
        return -1

    # -- the primary leaf ----------------------------------------------------------------
    def _primary(self, primary: Any, alloc: Allocation, empty: np.ndarray | None = None) -> bool:
        cluster = self.cluster
        n = primary.tasks
        for res, amount in primary.rusage:
            pool = cluster.pools.get(res)
            if pool is not None and pool.available < n * amount:
                return False
        for res, amount in primary.rusage_host:  # at least one host's worth
            pool = cluster.pools.get(res)
            if pool is not None and pool.available < amount:
                return False
        order = self._order(primary)
        if n == 1 and order is None and empty is None:
            # One task has exactly one plan, 1 x 1, and its walk is "the first host that can take
            # it": found here without building the plan and host iterators, and from the kept
            # lower bound on, not from host 0 (see ``_first_fit``).
            if self.cancelled():
                return False
            kept = self._kept(primary)
            cap = cluster.free_slots_ok() if kept[0] is None else kept[0]
            pos = _first_fit(cap, kept[3])
            kept[3] = len(cap) if pos < 0 else pos
            if pos < 0 or self.cancelled():
                return False
            self._commit(primary, [(pos, 1)], alloc)
            return True
        cap = self.capacity(primary)
        if empty is not None:
            cap = np.where(empty, cap, 0)  # a copy: the kept vector stays as it is
        if n > 1 and int(_total(cap)) < n:
            return False
        if n == 1:
            # The same walk in the request's order.
            if self.cancelled():
                return False
            fits = (cap if order is None else cap[order]) >= 1
            pos = int(fits.argmax()) if len(fits) else 0
            if not len(fits) or not fits[pos] or self.cancelled():
                return False
            self._commit(primary, [(pos if order is None else int(order[pos]), 1)], alloc)
            return True
        most = int(cap.max()) if len(cap) else 0
        plans = plan_iter(primary, most)
        try:
            for plan in plans:
                if self.cancelled():
                    return False
                if plan.slots_per_host > most and not plan.fill:
                    continue  # no host could take a full share of this plan

                placed = list(host_iter(plan, n, cap, order, self.cancelled))
                if sum(map(_second, placed)) == n:
                    self._commit(primary, placed, alloc)
                    return True
        finally:
            plans.close()
        return False

    def capacity(self, primary: Any) -> np.ndarray:
        """How many tasks of ``primary`` each host could take now (0 where it cannot run). Read-only:
        the vector is kept by the cluster and refreshed for the hosts that later charges touch."""
        cluster = self.cluster
        if primary.select is None and not primary.rusage and not primary.rusage_host:
            return cluster.free_slots_ok()  # read-only: nothing below modifies a capacity vector
        cap = self._kept(primary)[0]
        return cluster.free_slots_ok() if cap is None else cap

    def _kept(self, primary: Any) -> list[Any]:
        """``primary``'s kept capacity, refreshed (see ``_capacity_of``)."""
        return self.cluster.kept(primary, self._capacity_of, self._refresh_capacity)

    def _capacity_of(self, primary: Any) -> list[Any]:
        """``[capacity vector, availability columns, select mask, first]``.

        The vector is None where it is the free slots. The availability columns and the select mask
        it was made from stay the same objects for as long as it is kept. ``first`` is a lower
        bound on the first host that can take a task (no host before it can): a first-fit search
        starts there, and every charge journaled since lowers it to the charged host.
        """
        cluster = self.cluster
        consumed = [(cluster.available(res), amount) for res, amount in primary.rusage
                    if amount > 0 and res not in cluster.pools]
        # A per-host amount admits a host wholly or not at all; kept as a negative amount (-need).
        consumed += [(cluster.available(res), -amount) for res, amount in primary.rusage_host
                     if amount > 0 and res not in cluster.pools]
        mask = self.select_mask(primary)
        if mask is None and not consumed:
            return [None, consumed, mask, 0]
        cap = cluster.free_slots_ok().copy()
        for col, amount in consumed:
            if amount < 0:
                cap[col < -amount] = 0
            else:
                np.minimum(cap, col // amount, out=cap)
        if mask is not None:
            cap[~mask] = 0
        np.maximum(cap, 0, out=cap)
        return [cap, consumed, mask, 0]

    def _refresh_capacity(self, primary: Any, kept: list[Any], touched: list[int]) -> list[Any]:
        """Recompute the hosts charged since ``kept`` was last read: one by one when they are few,
        as one vector operation over just those hosts when there are more (usage reports between
        two rounds touch many), afresh when they are most hosts."""
        cap, consumed, mask, first = kept
        hosts = set(touched)
        low = min(hosts)
        if low < first:
            kept[3] = low
        if cap is None:
            return kept
        if len(hosts) * 2 > len(cap):
            return self._capacity_of(primary)
        free = self.cluster.free_slots_ok()
        if len(hosts) <= 8:
            for i in hosts:
                if mask is not None and not mask[i]:
                    continue  # stays 0
                c = int(free[i])
                for col, amount in consumed:
                    a = (0 if col[i] < -amount else c) if amount < 0 else int(col[i]) // amount
                    if a < c:
                        c = a
                cap[i] = c if c > 0 else 0
            return kept
        idx = np.fromiter(hosts, dtype=np.int64, count=len(hosts))
        c = free[idx]
        for col, amount in consumed:
            if amount < 0:
                c[col[idx] < -amount] = 0
            else:
                np.minimum(c, col[idx] // amount, out=c)
        if mask is not None:
            c[~mask[idx]] = 0
        np.maximum(c, 0, out=c)
        cap[idx] = c
        return kept

    def select_mask(self, primary: Any) -> np.ndarray | None:
        """Which hosts pass the select expression; cached until any host's values change."""
        if primary.select is None:
            return None
        hosts = self.cluster.hosts

        def update(mask: np.ndarray, changed: list[int]) -> np.ndarray:
            for i in changed:
                mask[i] = primary.evaluate_select(_lookup(hosts[i]))
            return mask

        return self.cluster.derived(("select", id(primary)), lambda: np.fromiter(
            (primary.evaluate_select(_lookup(h)) for h in hosts), dtype=bool, count=len(hosts)), update, primary)

    def _order(self, primary: Any) -> np.ndarray | None:
        """Host indexes sorted by the ``order[]`` keys; ties keep name order (stable sort).

        Kept with the keys and the sorted ``(key, index)`` pairs: when a few hosts report new values,
        only their pairs move (``bisect``), instead of sorting every host again.
        """
        if not primary.order:
            return None
        hosts = self.cluster.hosts

        def ranked(keys: list) -> tuple[list, list, np.ndarray]:
            order = sorted(range(len(keys)), key=keys.__getitem__)
            return keys, [(keys[i], i) for i in order], np.array(order, dtype=np.int64)

        def update(value: tuple[list, list, np.ndarray], changed: list[int]) -> tuple[list, list, np.ndarray]:
            keys, pairs, order = value
            if len(changed) > 16:
                for i in changed:
                    keys[i] = primary.order_key(_lookup(hosts[i]))
                return ranked(keys)
            moved = False
            for i in changed:
                old, new = keys[i], primary.order_key(_lookup(hosts[i]))
                keys[i] = new
                if new != old:  # keys are tuples of numbers (no NaN): (key, index) is a total order
                    del pairs[bisect_left(pairs, (old, i))]
                    insort(pairs, (new, i))
                    moved = True
            if moved:
                order = np.fromiter(map(_second, pairs), dtype=np.int64, count=len(pairs))
            return keys, pairs, order

        return self.cluster.derived(("order", id(primary)),
                                    lambda: ranked([primary.order_key(_lookup(h)) for h in hosts]), update,
                                    primary)[2]

    # -- charges -------------------------------------------------------------------------
    def _commit(self, primary: Any, placed: list[tuple[int, int]], alloc: Allocation) -> None:
        cluster = self.cluster
        if len(placed) == 1:
            # The usual case (one host): the same charges, in the same order, without the lists.
            i, t = placed[0]
            cluster.charge(i, "slots", t)
            alloc.slots.append((i, t))
            for res, amount in primary.rusage:
                if amount <= 0:
                    continue
                if res in cluster.pools:
                    cluster.charge_pool(res, t * amount)
                    alloc.pool.append((res, t * amount))
                else:
                    cluster.charge(i, res, t * amount)
                    alloc.charges.append((i, res, t * amount))
            self._commit_per_host(primary, [i], alloc)
            return
        n = len(placed)
        indexes, counts = zip(*placed, strict=True)
        hosts = np.fromiter(indexes, dtype=np.int64, count=n)
        tasks = np.fromiter(counts, dtype=np.int64, count=n)
        cluster.charge_many(hosts, "slots", tasks)
        alloc.slots.extend(placed)
        alloc.arrays.append((hosts, tasks))
        for res, amount in primary.rusage:
            if amount <= 0:
                continue
            if res in cluster.pools:
                total = int(_total(tasks)) * amount
                cluster.charge_pool(res, total)
                alloc.pool.append((res, total))
            else:
                amounts = tasks * amount
                cluster.charge_many(hosts, res, amounts)
                alloc.charges.extend(zip(indexes, repeat(res), amounts.tolist()))
        self._commit_per_host(primary, list(indexes), alloc)

    def _commit_per_host(self, primary: Any, hosts: list[int], alloc: Allocation) -> None:
        """Charge each ``rusage[NAME=V/host]`` once on every host the primary was placed on."""
        cluster = self.cluster
        for res, amount in primary.rusage_host:
            if amount <= 0:
                continue
            if res in cluster.pools:
                cluster.charge_pool(res, len(hosts) * amount)
                alloc.pool.append((res, len(hosts) * amount))
            else:
                for i in hosts:
                    cluster.charge(i, res, amount)
                    alloc.charges.append((i, res, amount))

    def rollback(self, alloc: Allocation) -> None:
        """Undo every charge of ``alloc``; the cluster is exactly as before (no release happened)."""
        cluster = self.cluster
        with cluster.neutral():
            if alloc.slots:
                cluster.charge_many(list(map(_first, alloc.slots)), "slots", [-t for _, t in alloc.slots])
            by_res: dict[str, tuple[list[int], list[int]]] = {}
            for i, res, amount in alloc.charges:
                hosts, amounts = by_res.setdefault(res, ([], []))
                hosts.append(i)
                amounts.append(-amount)
            for res, (hosts, amounts) in by_res.items():
                cluster.charge_many(hosts, res, amounts)
            for res, amount in reversed(alloc.pool):
                cluster.charge_pool(res, -amount)
            for i, rest in alloc.claim:
                cluster.charge(i, "slots", -rest)
        alloc.claim.clear()
        alloc.slots.clear()
        alloc.arrays.clear()
        alloc.charges.clear()
        alloc.pool.clear()

    # -- why it failed -------------------------------------------------------------------
    def explain(self, primary: Any, exclusive: bool = False, after: int = 0) -> PendReason:
        """Name the step that refused and the shortfall.

        ``after``: how many parts of its compound request are charged already (``why``), said in
        the detail so that the numbers add up for the reader.

        "Short by" is measured against the closest single candidate host when the placement must be
        on one host (one task, or ``span[hosts=1]``), and against the candidates' total otherwise.
        An exclusive job is measured against the matching hosts that run nothing, and told so when
        there is none.
        """
        cluster = self.cluster
        n = primary.tasks
        # A resource nobody advertises cannot come by waiting for others to finish: say so first,
        # before a shortfall of slots that would only hide it.
        for res, amount in primary.rusage:
            if amount > 0 and res not in cluster.pools and not cluster.advertised(res):
                return make_pend_reason("unknown-resource", res, n * amount, n * amount,
                                        detail=f"no host advertises {res}; it counts as zero")
        for res, amount in primary.rusage_host:
            if amount > 0 and res not in cluster.pools and not cluster.advertised(res):
                return make_pend_reason("unknown-resource", res, amount, amount,
                                        detail=f"no host advertises {res}; it counts as zero")
        mask = cluster.ok.copy()
        sel = self.select_mask(primary)
        if sel is not None:
            mask &= sel
        if not mask.any():
            if not cluster.ok.any():
                label = "registered host(s)" if sel is None else "matching host(s)"
                return make_pend_reason("select", detail="no host is available"
                                                         f"{self._unavailable(sel, label)}")
            return make_pend_reason("select", detail=f"no available host matches select[{primary.select}]"
                                                     f"{self._unavailable(sel)}")
        if exclusive:
            busy = int(mask.sum())
            mask &= self.empty_hosts()
            if not mask.any():
                return make_pend_reason("exclusive", detail=(
                    f"exclusive job: each of the {busy} available host{'s' if busy != 1 else ''} it may use "
                    f"runs other jobs"))
        single = n == 1 or primary.span_hosts == 1
        beside = "" if not after else " after its first part" if after == 1 else f" after its first {after} parts"
        ptile = primary.span_ptile
        if primary.span_hosts and primary.span_hosts > 1:
            ptile = -(-n // primary.span_hosts)  # span[hosts=N]: ceil(n / N) tasks on each host
        for res, amount in (("slots", 1), *primary.rusage):
            if amount <= 0:
                continue
            needed = n * amount
            pool = cluster.pools.get(res)
            if pool is not None:
                if pool.available < needed:
                    return make_pend_reason("shared", res, needed, needed - max(pool.available, 0),
                                            detail=f"cluster pool has {max(pool.available, 0)} left")
                continue
            if not cluster.advertised(res):
                return make_pend_reason("unknown-resource", res, needed, needed,
                                        detail=f"no host advertises {res}; it counts as zero")
            avail = np.maximum(cluster.available(res)[mask], 0)
            total = int(avail.sum())
            best = int(avail.max()) if len(avail) else 0
            have = best if single else total
            where = "closest host has" if single else "candidate hosts have"
            if have < needed:
                step = "slots" if res == "slots" else "rusage"
                if primary.span_hosts == 1 and total >= needed:
                    step = "span"
                return make_pend_reason(step, res, needed, needed - have,
                                        detail=f"{where} {format_quantity(res, have)}{beside}"
                                               f"{self._could_take(primary, sel, single, ptile)}")
            if ptile and not single:
                # span[ptile=p]: a host gives at most p tasks' worth, whatever it has free.
                have = int(np.minimum(avail // amount, ptile).sum()) * amount
                if have < needed:
                    return make_pend_reason("span", res, needed, needed - have,
                                            detail=f"{where} {format_quantity(res, have)} at ptile {ptile}{beside}"
                                                   f"{self._could_take(primary, sel, single, ptile)}")
        # Every resource suffices on its own; a host counts only for the tasks all of them allow.
        cap = self.capacity(primary)[mask]
        if ptile:
            cap = np.minimum(cap, ptile)
        have = int(cap.max()) if single else int(cap.sum())
        return make_pend_reason("span", "slots", n, max(n - have, 0),
                                detail=f"candidate hosts can take {have} of its {n} tasks with every resource it asks "
                                       f"for{beside}{self._could_take(primary, sel, single, ptile)}")


    def _unavailable(self, sel: np.ndarray | None, label: str = "matching host(s)") -> str:
        """The hosts a select matches (every host, for ``label`` "registered host(s)") that are not
        available, with their state: a job held to hosts (``-m``, ``-w``) that are closed or down
        says which, not just that none matches."""
        if sel is None and label == "matching host(s)":
            return ""
        return self._named(~self.cluster.ok if sel is None else sel & ~self.cluster.ok, label)

    def _named(self, which: np.ndarray, label: str) -> str:
        hosts = self.cluster.hosts
        down = [f"{hosts[i].name} is {hosts[i].status}" for i in np.flatnonzero(which)[:9].tolist()]
        if not down:
            return ""
        more = "" if len(down) <= 8 else f" and {int(which.sum()) - 8} more"
        return f"; {label}: " + ", ".join(down[:8]) + more

    def _could_take(self, primary: Any, sel: np.ndarray | None, single: bool, ptile: int | None) -> str:
        """Unavailable hosts (closed, down) that would make room for ``primary`` if they were
        available: a job held back by them alone says which, not only the shortfall of the others."""
        cluster = self.cluster
        down = ~cluster.ok if sel is None else sel & ~cluster.ok
        if not down.any():
            return ""
        cap = np.maximum(cluster.available("slots"), 0)
        for res, amount in primary.rusage:
            if amount > 0 and res not in cluster.pools:
                np.minimum(cap, np.maximum(cluster.available(res), 0) // amount, out=cap)
        if ptile:
            np.minimum(cap, ptile, out=cap)
        usable = cluster.ok if sel is None else cluster.ok & sel
        n = primary.tasks
        if single:
            helps = down & (cap >= n)
        else:
            helps = down & (cap > 0) if int(cap[usable | down].sum()) >= n else down & False
        return self._named(helps, "unavailable host(s) that could take it")


def _first_fit(cap: np.ndarray, start: int) -> int:
    """The first index from ``start`` on where ``cap`` is at least 1, or -1.

    Searched in growing chunks: in a round the first fit is usually at or just after ``start``,
    so a job costs a short comparison instead of one over every host.
    """
    n = len(cap)
    if start < n and cap[start] >= 1:  # the host that took the last task usually has room for more
        return start
    step = 64
    while start < n:
        fits = cap[start:start + step] >= 1
        pos = int(fits.argmax())
        if fits[pos]:
            return start + pos
        start += step
        step *= 4
    return -1


def _lookup(host) -> Callable[[str], Any]:
    features = host.static.get("features") or ()

    def lookup(name: str) -> Any:
        if name == "slots":
            return host.slots
        if name == "hname":
            return host.name
        v = host.value(name)
        if v is None and name in features:
            return 1  # a host feature reads as LSF's boolean resource (xce.core.features)
        return v
    return lookup
