"""Hosts as numpy columns, so that finding candidates for a job is a few vector operations over
all hosts instead of a Python loop per host per job.

Host ``i`` is the ``i``-th host by name. For every resource a job may consume there is a
``total`` column (what the host offers: its slot count, its last reported ``mem``, a provider's
capacity) and an ``inuse`` column (this scheduler's own charge tally). ``available = total - inuse``
(resource-accounting.md). Worker reports overwrite ``total`` and never touch ``inuse``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from xce.core.model import Host, Job
from xce.core.resources.definitions import ResourceCatalog
from xce.core.specs import HostSpec


def _numeric(v: Any) -> int:
    if isinstance(v, bool) or v is None:
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    return 0


@dataclass(slots=True)
class Pool:
    """A cluster-wide shared resource (licenses): one total, one in-use tally."""

    total: int
    inuse: int = 0

    @property
    def available(self) -> int:
        return self.total - self.inuse


#: Charges journaled for the kept capacity vectors before they are dropped instead (see ``kept``).
JOURNAL_MAX = 4096


class Cluster:
    """The hosts' columns and the in-use tally.

    In-use is bookkeeping kept exact by every charge (the ledger charges what it records on the
    job, and gives back what it recorded): it always equals ``rederive``'s recomputation from the
    jobs' own records, which tests check after every event (``core.validate``) and over random
    event streams without re-deriving in between (``tests/core/test_incremental_inuse.py``). So
    a round starts from the columns as they are; a full re-derivation is needed only when the
    host list changes (indexes move) and when a snapshot is loaded.
    """

    __slots__ = ("hosts", "index", "names", "held", "catalog", "ok", "pools", "_total", "_inuse", "_avail", "_free_ok",
                 "_jobs", "release_epoch", "_neutral", "values_version", "_derived",
                 "_changed", "_caps", "_journal", "_later")

    def __init__(self, catalog: ResourceCatalog, jobs: dict[int, Job]) -> None:
        self.hosts: list[Host] = []
        self.index: dict[str, int] = {}
        #: Host names by index: a wide job's placement is named with one ``map`` over its indexes.
        self.names: list[str] = []
        #: jobid -> host index -> tasks of every job charged on hosts, written by the ledger at
        #: dispatch and dropped at release: what each ``Host.jobs`` reads. Always this dict (hosts
        #: hold it); its indexes are moved with the hosts'.
        self.held: dict[int, dict[int, int]] = {}
        self.catalog = catalog
        self.ok = np.zeros(0, dtype=bool)
        self.pools: dict[str, Pool] = {}
        self._total: dict[str, np.ndarray] = {}
        self._inuse: dict[str, np.ndarray] = {}
        # Caches of total - inuse, kept current by ``charge`` and dropped when totals change.
        self._avail: dict[str, np.ndarray] = {}
        self._free_ok: np.ndarray | None = None
        self._jobs = jobs
        #: Bumped whenever anything could make more room: a release, a host change, new values.
        #: A job that failed at the current epoch cannot fit now either (capacity only shrank).
        self.release_epoch = 0
        self._neutral = 0
        #: Bumped when any host's values change: select masks and order permutations depend only
        #: on values, so they are kept across rounds until then.
        self.values_version = 0
        #: key -> [version, value] of values derived from host values (select masks, orders).
        self._derived: dict[Any, list[Any]] = {}
        #: (version, host index) of every value change since the oldest cached derivation.
        self._changed: list[tuple[int, int]] = []
        #: id(primary) -> [primary, journal position, capacity vector]: a job's per-host task
        #: capacity, kept while only charges happen; see ``capacity``.
        self._caps: dict[int, list[Any]] = {}
        #: Host indexes charged since the capacity vectors were last dropped, in order (at most
        #: ``JOURNAL_MAX``: past that the vectors are dropped, cheaper than refreshing from it).
        self._journal: list[int] = []
        #: resource -> host index -> amount: usage charges not yet in the columns (``charge_later``).
        self._later: dict[str, dict[int, int]] = {}

    # -- hosts ---------------------------------------------------------------------------
    def upsert_hosts(self, specs: Iterable[HostSpec]) -> None:
        self._settle()  # before host indexes move
        self.release_epoch += 1
        self.values_version += 1
        self._derived.clear()  # host indexes may move: nothing derived survives
        self._changed.clear()
        added = False
        for spec in specs:
            host = self.host(spec.name)
            if host is None:
                host = Host(name=spec.name, held=self.held)
                self.hosts.append(host)
                added = True
            host.status = spec.status
            host.static = dict(spec.values)
            for name in host.static:
                self.catalog.advertise(name)
        if added:
            self.hosts.sort(key=lambda h: h.name)
            old_names = self.names
            self.index = index = {h.name: i for i, h in enumerate(self.hosts)}
            self.names = [h.name for h in self.hosts]
            for i, h in enumerate(self.hosts):
                h.index = i
            for jobid, on in self.held.items():
                self.held[jobid] = {index[old_names[i]]: tasks for i, tasks in on.items()}
            self._total.clear()
            self._inuse.clear()
            self.rederive()
        else:
            self._total.clear()
        self._drop_caches()
        self.ok = np.fromiter((h.status == "ok" for h in self.hosts), dtype=bool, count=len(self.hosts))

    def host(self, name: str) -> Host | None:
        i = self.index.get(name)
        return None if i is None else self.hosts[i]

    def set_values(self, values: dict[str, dict[str, Any]], replace: bool) -> None:
        """Apply a worker's load report: overwrite its values; in-use is left alone on purpose.

        The caches follow in place: a changed total is written into its availability column, and
        the kept capacity vectors refresh the reported hosts like charged ones (journaled), except
        those with a select mask, which the new values may change: they are dropped.
        """
        self._settle()
        self.release_epoch += 1
        self.values_version += 1
        if self._caps:
            for key in [k for k, entry in self._caps.items() if entry[2][2] is not None]:
                del self._caps[key]
        for name, vals in values.items():
            i = self.index.get(name)
            if i is None:
                continue
            if self._derived:
                self._changed.append((self.values_version, i))
            host = self.hosts[i]
            if replace:
                host.dynamic = dict(vals)
            else:
                host.dynamic.update(vals)
            for res, col in self._total.items():
                if res in vals or replace:
                    col[i] = self._capacity(host, res)
                    avail = self._avail.get(res)
                    if avail is not None:
                        avail[i] = col[i] - self.inuse(res)[i]
                    if res == "slots":
                        self._free_ok = None  # recomputed when next read
            if self._caps:
                self._journal.append(i)
        if not self._caps or len(self._journal) > JOURNAL_MAX:
            self._caps.clear()
            self._journal.clear()

    # -- columns -------------------------------------------------------------------------
    @staticmethod
    def _capacity(host: Host, res: str) -> int:
        if res == "slots":
            return host.slots
        return _numeric(host.value(res))

    def total(self, res: str) -> np.ndarray:
        col = self._total.get(res)
        if col is None:
            col = np.fromiter((self._capacity(h, res) for h in self.hosts), dtype=np.int64,
                              count=len(self.hosts))
            self._total[res] = col
        return col

    def inuse(self, res: str) -> np.ndarray:
        if self._later:
            self._settle()
        col = self._inuse.get(res)
        if col is None:
            col = np.zeros(len(self.hosts), dtype=np.int64)
            self._inuse[res] = col
        return col

    def available(self, res: str) -> np.ndarray:
        """``total - inuse`` for every host. Shared with the cache: callers must not modify it."""
        if self._later:
            self._settle()
        col = self._avail.get(res)
        if col is None:
            col = self._avail[res] = self.total(res) - self.inuse(res)
        return col

    def free_slots_ok(self) -> np.ndarray:
        """Free slots of every host, zero where the host is not available. Read-only."""
        if self._later:
            self._settle()
        col = self._free_ok
        if col is None:
            col = self._free_ok = np.where(self.ok, self.available("slots"), 0)
        return col

    def derived(self, key: Any, compute: Any, update: Any = None, owner: Any = None) -> Any:
        """A value computed from host values only (a select mask, an order), kept across rounds.

        When some hosts' values changed since it was computed, ``update(value, hosts)`` refreshes
        just those hosts if given; otherwise it is computed again. A key may hold an ``id()``
        (hashing a parsed request walks its whole tree, every ask); then ``owner`` is the object
        itself, kept in the entry so the id cannot be reused while the entry lives.
        """
        entry = self._derived.get(key)
        if entry is None or entry[2] is not owner:
            if len(self._derived) > 4096:
                self._derived.clear()
                self._changed.clear()
            value = compute()
            self._derived[key] = [self.values_version, value, owner]
            return value
        version, value, _ = entry
        if version != self.values_version:
            hosts = sorted({i for v, i in self._changed if v > version})
            value = update(value, hosts) if update is not None else compute()
            entry[0], entry[1] = self.values_version, value
            oldest = min(e[0] for e in self._derived.values())
            if self._changed and self._changed[0][0] <= oldest:
                self._changed = [c for c in self._changed if c[0] > oldest]
        return value

    def kept(self, owner: Any, compute: Any, refresh: Any) -> Any:
        """A per-host vector of ``owner`` derived from free slots and availability (a job's task
        capacity), kept while only charges happen.

        Computing one is several passes over every host, and a round asks for it once per job; a
        dispatch changes one or a few hosts. So ``refresh(owner, value, hosts)`` recomputes just the hosts
        charged since it was last read, and anything else (new totals, host changes, the per-round
        re-derivation) drops it. Keyed by identity: parsed requests are interned, and the entry holds
        ``owner`` so its id cannot be reused while it is kept.
        """
        if self._later:
            self._settle()
        entry = self._caps.get(id(owner))
        journal = self._journal
        if entry is None or entry[0] is not owner:
            value = compute(owner)
            self._caps[id(owner)] = [owner, len(journal), value]
            return value
        value = entry[2]
        if entry[1] != len(journal):
            value = refresh(owner, value, journal[entry[1]:])
            entry[1], entry[2] = len(journal), value
        return value

    def free_slot_total(self) -> int:
        """Free slots over all available hosts: no job wanting more tasks can fit anywhere."""
        return int(self.free_slots_ok().sum())

    def _drop_caches(self) -> None:
        self._avail.clear()
        self._free_ok = None
        self._caps.clear()
        self._journal.clear()

    def advertised(self, res: str) -> bool:
        """Whether anybody offers ``res`` at all; a name nobody advertises counts as zero."""
        if res in self.pools:
            return True
        if res == "slots":
            return bool(self.hosts)
        return any(h.value(res) is not None for h in self.hosts)

    # -- charges -------------------------------------------------------------------------
    def neutral(self) -> "_Neutral":
        """Charges inside this block are undone before it ends (rollback, dry runs): no release."""
        return _Neutral(self)

    def charge(self, i: int, res: str, amount: int) -> None:
        if amount < 0 and not self._neutral:
            self.release_epoch += 1
        self.inuse(res)[i] += amount
        avail = self._avail.get(res)
        if avail is not None:
            avail[i] -= amount
        if res == "slots" and self._free_ok is not None and self.ok[i]:
            self._free_ok[i] -= amount
        if self._caps:
            journal = self._journal
            journal.append(i)
            if len(journal) > JOURNAL_MAX:
                self._caps.clear()
                journal.clear()

    def charge_many(self, hosts: Any, res: str, amounts: Any) -> None:
        """``charge`` for several hosts (lists or int64 arrays), as one vector operation when there are
        enough of them to pay for it (``np.add.at``: a compound's rollback may name a host twice).

        A wide job's ledger and allocator pass arrays they keep: converting thousands of Python
        ints per dispatch and release cost more than the charge itself."""
        if len(hosts) < 8:
            if isinstance(hosts, np.ndarray):
                hosts, amounts = hosts.tolist(), amounts.tolist()
            for i, amount in zip(hosts, amounts, strict=True):
                self.charge(i, res, amount)
            return
        idx = _int64(hosts)
        amounts = _int64(amounts)
        if not self._neutral and (amounts < 0).any():
            self.release_epoch += 1
        np.add.at(self.inuse(res), idx, amounts)
        avail = self._avail.get(res)
        if avail is not None:
            np.subtract.at(avail, idx, amounts)
        if res == "slots" and self._free_ok is not None:
            np.subtract.at(self._free_ok, idx, np.where(self.ok[idx], amounts, 0))
        if self._caps:
            journal = self._journal
            if len(journal) + len(idx) > JOURNAL_MAX:  # would be dropped once extended: drop it now
                self._caps.clear()
                journal.clear()
            else:
                journal.extend(idx.tolist())

    def charge_later(self, i: int, res: str, amount: int) -> None:
        """``charge``, with the columns written when next read (``_settle``).

        For usage reports: a busy cluster sends many between two rounds, and nothing reads the
        columns in between, so their charges are summed per host here and written as one vector
        operation per resource instead of several numpy element writes each. A release still
        counts at once (``release_epoch``), as in ``charge``.
        """
        if amount < 0 and not self._neutral:
            self.release_epoch += 1
        per_host = self._later.get(res)
        if per_host is None:
            if res not in self._inuse:  # the column exists from now on, as after ``charge``
                self._inuse[res] = np.zeros(len(self.hosts), dtype=np.int64)
            per_host = self._later[res] = {}
        per_host[i] = per_host.get(i, 0) + amount

    def _settle(self) -> None:
        """Write the charges ``charge_later`` kept into the columns and the caches built on them."""
        later = self._later
        if not later:
            return
        self._later = {}
        for res, per_host in later.items():
            n = len(per_host)
            idx = np.fromiter(per_host, dtype=np.int64, count=n)
            amounts = np.fromiter(per_host.values(), dtype=np.int64, count=n)
            self._inuse[res][idx] += amounts  # host indexes are unique here
            avail = self._avail.get(res)
            if avail is not None:
                avail[idx] -= amounts
            if res == "slots" and self._free_ok is not None:
                self._free_ok[idx] -= np.where(self.ok[idx], amounts, 0)
            if self._caps:
                journal = self._journal
                journal.extend(per_host)
                if len(journal) > JOURNAL_MAX:
                    self._caps.clear()
                    journal.clear()

    def charge_pool(self, res: str, amount: int) -> None:
        if amount < 0 and not self._neutral:
            self.release_epoch += 1
        self.pools[res].inuse += amount

    def rederive(self) -> None:
        """Reset in-use and re-derive it from the jobs' own records (bug-1624's reset).

        Charges keep the columns equal to this (see the class docstring), so it runs when that
        bookkeeping cannot apply: the host list changed (indexes moved) or a snapshot was loaded;
        ``core.validate`` runs it to check the bookkeeping.
        """
        self._settle()
        self._drop_caches()
        for res, per_host in self.derive_inuse().items():
            col = self.inuse(res)
            col[:] = 0
            if per_host:
                col[np.fromiter(per_host, dtype=np.int64, count=len(per_host))] = \
                    np.fromiter(per_host.values(), dtype=np.int64, count=len(per_host))
        for pool in self.pools.values():
            pool.inuse = 0
        for job in self._jobs.values():
            if job.real_charged:
                for res, amount in job.shared_charged.items():
                    if res in self.pools:
                        self.pools[res].inuse += amount

    def derive_inuse(self) -> dict[str, dict[int, int]]:
        """resource -> host index -> in-use, summed from the jobs' own records (nothing changes).

        Every resource with a column appears, with an empty dict where nothing is charged.
        """
        sums: dict[str, dict[int, int]] = {res: {} for res in self._inuse}
        jobs, index, names = self._jobs, self.index, self.names
        for jobid, on in self.held.items():
            job = jobs[jobid]
            if job.slots_charged and on:
                col = sums.setdefault("slots", {})
                claim = dict(job.claim) if job.claim else None  # an exclusive job holds every slot it claimed
                for i, tasks in on.items():
                    if claim is not None:
                        tasks = claim.get(names[i], tasks)
                    col[i] = col.get(i, 0) + tasks
            if job.real_charged:
                for (hname, res), acc in job.accounts.items():
                    i = index.get(hname)
                    charged = acc.reserved + acc.used
                    if i is not None and i in on and charged:
                        col = sums.setdefault(res, {})
                        col[i] = col.get(i, 0) + charged
        return sums

    def inuse_table(self) -> dict[str, dict[str, int]]:
        """host -> resource -> in-use, for tests, validation and ``xce jobs -l`` style views."""
        self._settle()
        out: dict[str, dict[str, int]] = {}
        for res in sorted(self._inuse):
            col = self._inuse[res]
            for i, h in enumerate(self.hosts):
                if col[i]:
                    out.setdefault(h.name, {})[res] = int(col[i])
        return out


def _int64(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    return np.fromiter(values, dtype=np.int64, count=len(values))  # about twice np.array's speed


class _Neutral:
    __slots__ = ("cluster",)

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def __enter__(self) -> None:
        self.cluster._neutral += 1

    def __exit__(self, *exc: object) -> None:
        self.cluster._neutral -= 1
