"""Who holds what: charging and releasing a job's slots, real resources and shared pools.

One place keeps the three tallies consistent: the cluster's in-use columns, each job's own
account records (the columns always equal their re-derivation from these), and the queue
counters MAX_RUNNING looks at. Suspension releases only the virtual slots; real resources stay charged at
``max(reserved, actual)`` because the suspended process is still resident.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np

from xce.core.alloc.allocator import Allocation
from xce.core.cluster import Cluster
from xce.core.model import Account, Job, Queue
from xce.core.resources.definitions import ResourceCatalog

_first, _second = itemgetter(0), itemgetter(1)


class Ledger:
    __slots__ = ("cluster", "queues", "running", "_charged_names", "_names_for")

    def __init__(self, cluster: Cluster, queues: dict[str, Queue], running: dict[int, Job]) -> None:
        self.cluster = cluster
        self.queues = queues
        #: Jobs holding slots, in the order they took them: the preemption candidates.
        self.running = running
        #: The usage names of a tick (in its order) -> ((wire name, resource), ...) of those that are
        #: charged, by wire name: what ``reconcile`` resolves for every tick, kept while
        #: ``_names_for`` (the name map and the catalog version it was resolved with) holds.
        self._charged_names: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
        self._names_for: tuple[Any, int] = (None, -1)

    def _count(self, job: Job, delta: int) -> None:
        queue = self.queues[job.queue]
        queue.running += delta
        left = queue.running_by_user.get(job.user, 0) + delta
        if left > 0:
            queue.running_by_user[job.user] = left
        else:
            queue.running_by_user.pop(job.user, None)
        if delta > 0:
            self.running[job.jobid] = job
        else:
            self.running.pop(job.jobid, None)

    def record_dispatch(self, job: Job, alloc: Allocation) -> None:
        """The allocator already charged the columns; record on the job what it holds."""
        cluster = self.cluster
        hosts = cluster.hosts
        placed = dict(alloc.slots)
        if len(placed) != len(alloc.slots):  # the primaries of a compound shared a host: tasks add up
            placed = {}
            for i, tasks in alloc.slots:
                placed[i] = placed.get(i, 0) + tasks
        for i, res, amount in alloc.charges:
            acc = job.accounts.setdefault((hosts[i].name, res), Account())
            acc.reserved += amount
            acc.allocated += amount
        for res, amount in alloc.pool:
            job.shared_charged[res] = job.shared_charged.get(res, 0) + amount
        cluster.held[job.jobid] = placed
        job.placement = tuple(zip(map(cluster.names.__getitem__, placed), placed.values(), strict=True))
        if len(alloc.arrays) == 1 and len(alloc.arrays[0][0]) == len(alloc.slots):  # one wide primary
            at_hosts, at_tasks = alloc.arrays[0]
        else:
            n = len(placed)
            at_hosts = np.fromiter(placed, dtype=np.int64, count=n)
            at_tasks = np.fromiter(placed.values(), dtype=np.int64, count=n)
        job.hosts_at = (cluster.index, job.placement, at_hosts, at_tasks)
        if alloc.claim:  # an exclusive job: charged every slot of its hosts
            held = dict(job.placement)
            for i, rest in alloc.claim:
                name = cluster.hosts[i].name
                held[name] = held.get(name, 0) + rest
            job.claim = tuple(held.items())
        job.slots_charged = True
        job.real_charged = True
        self._count(job, +1)

    def recharge(self, job: Job) -> None:
        """A job already placed when the scheduler (re)started: charge its reservation again."""
        cluster = self.cluster
        primary = job.request.alternatives[0].primaries[0] if job.request is not None else None
        on = cluster.held.get(job.jobid)
        for host_name, tasks in job.placement:
            i = cluster.index.get(host_name)
            if i is None:
                continue
            if on is None:
                on = cluster.held[job.jobid] = {}
            on[i] = on.get(i, 0) + tasks
            for res, amount in (primary.rusage if primary is not None else ()):
                if res in cluster.pools:
                    job.shared_charged[res] = job.shared_charged.get(res, 0) + tasks * amount
                    cluster.charge_pool(res, tasks * amount)
                else:
                    acc = job.accounts.setdefault((host_name, res), Account())
                    acc.reserved += tasks * amount
                    acc.allocated += tasks * amount
                    cluster.charge(cluster.index[host_name], res, tasks * amount)
            for res, amount in (primary.rusage_host if primary is not None else ()):  # once on each host
                if res in cluster.pools:
                    job.shared_charged[res] = job.shared_charged.get(res, 0) + amount
                    cluster.charge_pool(res, amount)
                else:
                    acc = job.accounts.setdefault((host_name, res), Account())
                    acc.reserved += amount
                    acc.allocated += amount
                    cluster.charge(cluster.index[host_name], res, amount)
        job.real_charged = True
        if job.exclusive:
            # Claimed whole again, at the slots its hosts have now (a job that already holds more
            # than that keeps what it holds).
            claim = []
            for host_name, tasks in job.placement:
                host = cluster.host(host_name)
                claim.append((host_name, tasks if host is None else max(tasks, host.slots)))
            job.claim = tuple(claim)

    def _indexes(self, job: Job, held: tuple[tuple[str, int], ...]) -> tuple[np.ndarray, np.ndarray]:
        """The host indexes of ``held`` (the job's placement or claim) and the tasks on each, as
        arrays, hosts gone left out. Those of the placement were recorded at dispatch (``hosts_at``),
        good while it and the host list are the same objects (``cluster.index`` is replaced when hosts
        come): a wide job's release then needs no name lookup or conversion per host."""
        index = self.cluster.index
        at = job.hosts_at
        if at is not None and at[0] is index and at[1] is held:
            return at[2], at[3]
        try:
            hosts = list(map(index.__getitem__, map(_first, held)))
            tasks = list(map(_second, held))
        except KeyError:  # a host removed since: the job keeps its record of it, nothing is charged there
            kept = [(index[h], t) for h, t in held if h in index]
            hosts, tasks = list(map(_first, kept)), list(map(_second, kept))
        return (np.fromiter(hosts, dtype=np.int64, count=len(hosts)),
                np.fromiter(tasks, dtype=np.int64, count=len(tasks)))

    def host_indexes(self, job: Job) -> tuple[np.ndarray, np.ndarray] | None:
        """A running job's host indexes and tasks per host, as recorded at dispatch, while they
        still say what ``job.placement`` says (None otherwise): the simulator packs a wide job's
        placement from them instead of looking up every host name again. Read-only."""
        at = job.hosts_at
        if at is None or at[0] is not self.cluster.index or at[1] is not job.placement:
            return None
        return at[2], at[3]

    def _charge_placement(self, job: Job, sign: int) -> None:
        held = job.claim or job.placement
        if len(held) == 1:  # one host: the one charge ``charge_many`` would make
            host, tasks = held[0]
            i = self.cluster.index.get(host)
            if i is not None:
                self.cluster.charge(i, "slots", sign * tasks)
            return
        hosts, tasks = self._indexes(job, held)
        self.cluster.charge_many(hosts, "slots", tasks if sign > 0 else -tasks)

    def charge_slots(self, job: Job) -> None:
        self._charge_placement(job, +1)
        job.slots_charged = True
        self._count(job, +1)

    def release_slots(self, job: Job) -> None:
        if not job.slots_charged:
            return
        self._charge_placement(job, -1)
        job.slots_charged = False
        self._count(job, -1)

    def release_all(self, job: Job) -> None:
        """Give back everything: slots, real resources, shared pools; forget the placement."""
        self.release_slots(job)
        cluster = self.cluster
        if job.real_charged and len(job.placement) == 1:
            # The usual job: one host, so one charge per resource, the same ``charge_many`` makes.
            host = job.placement[0][0]
            if all(h == host for h, _ in job.accounts):
                i = cluster.index.get(host)
                if i is not None:
                    for (_, res), acc in job.accounts.items():
                        if acc.charged:
                            cluster.charge(i, res, -acc.charged)
                for res, amount in job.shared_charged.items():
                    if res in cluster.pools:
                        cluster.charge_pool(res, -amount)
                job.real_charged = False
        if job.real_charged:
            by_res: dict[str, tuple[list[int], list[int]]] = {}
            for (host_name, res), acc in job.accounts.items():
                i = cluster.index.get(host_name)
                if i is not None and acc.charged:
                    hosts, amounts = by_res.setdefault(res, ([], []))
                    hosts.append(i)
                    amounts.append(-acc.charged)
            for res, (hosts, amounts) in by_res.items():
                cluster.charge_many(hosts, res, amounts)
            for res, amount in job.shared_charged.items():
                if res in cluster.pools:
                    cluster.charge_pool(res, -amount)
            job.real_charged = False
        cluster.held.pop(job.jobid, None)
        job.hosts_at = None
        job.accounts.clear()
        job.shared_charged.clear()
        job.placement = ()
        job.claim = ()

    def move_queue(self, job: Job, queue: str) -> None:
        """A running job changed queue: its slots stay taken, the counters move."""
        held = job.slots_charged
        if held:
            self._count(job, -1)
        job.queue = queue
        if held:
            self._count(job, +1)

    def reconcile(self, job: Job, usage: dict[str, Any], names: dict[str, str], catalog: ResourceCatalog) -> None:
        """Reconcile real usage: ``used = max(0, actual - reserved)``, applying only the delta.

        Only single-host jobs: the usage report carries no host, so a multi-host job stays charged
        at its flat reservation on each host (resource-accounting.md). A name that is not a
        registered real consumable (``cpu_time``, anything unknown) is never charged.
        """
        if len(job.placement) != 1 or not job.real_charged:
            return
        host_name = job.placement[0][0]
        i = self.cluster.index.get(host_name)
        if i is None:
            return
        accounts = job.accounts
        for wire_name, res in self._charged(usage, names, catalog):
            acc = accounts.get((host_name, res))
            if acc is None:
                acc = accounts[(host_name, res)] = Account()
            used = max(0, int(usage[wire_name]) - acc.reserved)
            delta = used - acc.used
            acc.used = used
            if delta:
                self.cluster.charge_later(i, res, delta)

    def _charged(self, usage: dict[str, Any], names: dict[str, str],
                 catalog: ResourceCatalog) -> tuple[tuple[str, str], ...]:
        """The names of ``usage`` that are charged, each with its resource, sorted by wire name.

        Every tick of a cluster names the same few things, so this is worked out once per set of
        names (and again when the name map or the catalog changes), not for every tick.
        """
        if self._names_for[0] is not names or self._names_for[1] != catalog.version:
            self._charged_names.clear()
            self._names_for = (names, catalog.version)
        key = tuple(usage)
        found = self._charged_names.get(key)
        if found is None:
            out = []
            for wire_name in sorted(key):
                res = names.get(wire_name, wire_name)
                rdef = catalog.get(res)
                if rdef is not None and rdef.real and rdef.consumable:
                    out.append((wire_name, res))
            found = tuple(out)
            if len(self._charged_names) > 1024:
                self._charged_names.clear()
            self._charged_names[key] = found
        return found
