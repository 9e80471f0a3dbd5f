"""Whether a job could ever run on the cluster as it is registered: the check behind refusing
``-n 100`` on six slots at submission, and behind the pend reason "cannot run on the current
cluster" once the cluster has shrunk under a job that was accepted.

"Ever" means with every registered host empty and up: more tasks than all hosts' slots together,
more of a resource per task than the largest host has (a task's share is never split across hosts),
more in total than all hosts or a shared pool hold. A down host still counts: it may come back
(a decommissioned one is removed, ``xceadmin host remove``, and counts no more). With
no slot registered yet (a cluster starting) nothing is judged. A provider's resource (``DOMAIN/NAME``)
no registered host advertises is refused, as Slurm refuses a gres no node has (``xce.io/gpu`` in its
words), unless a host of the configuration that has not registered yet may bring it (GPUs where
``xce.toml`` gives it a GPU model). Memory is judged against a host's ``maxmem`` (its ``mem`` is
what is free now).

Features and GPU models (:func:`host_facts`) count every host the cluster has or expects: what
``xce.toml`` gives a host counts before it registers, so that a job may wait for it.

A job held to some hosts (``hname == "a" || ...`` and ``hname != "x"`` in its select, as a host list
is folded at submission) is judged against those hosts' slots, and ``span[hosts=N]`` (``-N``)
against how many hosts there are.

A shortfall is told in job-resources.md's form, "needs R N, short by R M" and then why in
parentheses, like the scheduler's own reasons it replaces: the resource, what the job needs and how
much the cluster lacks, never only a description of the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xce.config.schema import host_traits
from xce.controller.service import Controller

#: The pend reason's step, so "pending by reason" counts these jobs apart.
STEP = "cluster"
GPU = "xce.io/gpu"
#: Slurm's words (sbatch: "Batch job submission failed: ..."), at the head of the refusals they name.
INVALID_GRES = "Invalid generic resource (gres) specification"
INVALID_FEATURE = "Invalid feature specification"
NOT_AVAILABLE = "Requested node configuration is not available"
SLURM_KINDS = {"gres": INVALID_GRES, "feature": INVALID_FEATURE, "node_configuration": NOT_AVAILABLE}


@dataclass
class Capacity:
    """The registered cluster summed up once; :meth:`problem` is then cheap per job."""

    hosts: int = 0
    slots: int = 0
    largest: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)
    #: Resources a host named in the configuration may bring when it registers (GPUs where the
    #: configuration gives it a GPU model): not refused while such a host has not registered.
    coming: set[str] = field(default_factory=set)
    #: Slots of every registered host, by name.
    slots_of: dict[str, int] = field(default_factory=dict)
    _seen: dict[tuple[str, int], str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, ctl: Controller) -> "Capacity":
        cap = cls(pools={n: p.total for n, p in ctl.config.shared_resources.items()})
        for h in ctl.hosts.values():
            values = ctl.host_values(h)
            cap.hosts += 1
            slots = values.get("slots", values.get("ncpus", 0))
            cap.slots += int(slots) if isinstance(slots, (int, float)) else 0
            cap.slots_of[h.name] = int(slots) if isinstance(slots, (int, float)) else 0
            for name, value in values.items():
                if name == "maxmem":
                    name = "mem"
                elif name == "mem":
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    cap.largest[name] = max(cap.largest.get(name, 0), int(value))
                    cap.total[name] = cap.total.get(name, 0) + int(value)
        if any(host_traits(ctl.config, name)[1].get("gpu_model") for name in unregistered(ctl)):
            cap.coming.add(GPU)
        return cap

    def problem(self, request_text: str, tasks: int) -> str | None:
        """Why a job of this requirement can never run here, or None (also when unsure)."""
        if not self.slots:  # no host, or none with a slot yet: a cluster still starting
            return None
        key = (request_text, tasks)
        if key not in self._seen:
            self._seen[key] = self._judge(request_text, tasks)
        return self._seen[key]

    def _judge(self, request_text: str, tasks: int) -> str | None:
        from xce.core.quantity import human_quantity
        from xce.core.resreq import RequestSyntaxError, parse_request

        try:
            parsed = parse_request(request_text, tasks)
        except (RequestSyntaxError, ValueError):
            return None  # refused elsewhere, with the parser's own message
        problems = []
        for alternative in parsed.alternatives:
            why = self._compound(alternative, human_quantity)
            if why is None:
                return None
            problems.append(why)
        return problems[0]

    def _compound(self, compound: Any, human) -> str | None:
        total_tasks = compound.total_tasks
        if total_tasks > self.slots:
            return (f"needs slots {total_tasks}, short by slots {total_tasks - self.slots} (the cluster has "
                    f"{self.slots} slots on {self.hosts} host{'s' if self.hosts != 1 else ''})")
        need: dict[str, int] = {}
        for primary in compound.primaries:
            why = self._hosts(primary)
            if why is not None:
                return why
            for name, amount in primary.rusage:
                def show(v: int, name: str = name) -> str:
                    return human(name, v)

                if name in self.pools:
                    wanted, pool = amount * primary.tasks, self.pools[name]
                    if wanted > pool:
                        return (f"needs {name} {show(wanted)}, short by {name} {show(wanted - pool)} "
                                f"(its shared pool holds {show(pool)})")
                    continue
                if name not in self.largest:
                    if name in self.coming or "/" not in name:
                        continue  # a configured host that has it has not registered yet; a load index
                    if name == GPU:
                        return (f"{INVALID_GRES}: needs {name} {show(amount)} but no host has GPUs (the workers of "
                                f"{self.hosts} host{'s' if self.hosts != 1 else ''} found none)")
                    return (f"needs {name} {show(amount)}, but no host has {name} (no registered host advertises "
                            f"it)")
                largest = self.largest[name]
                # Tasks that must share a host (span[ptile=N], span[hosts=N]) need their amounts together.
                together = min(primary.tasks, primary.span_ptile or (-(-primary.tasks // primary.span_hosts)
                                                                      if primary.span_hosts else 1))
                if amount * together > largest:
                    what = "one task" if together == 1 else f"the {together} tasks one host must take"
                    return (f"{NOT_AVAILABLE + ': ' if name == GPU else ''}needs {name} {show(amount * together)}, "
                            f"short by {name} {show(amount * together - largest)} (for {what}; the largest host "
                            f"has {show(largest)})")
                need[name] = need.get(name, 0) + amount * primary.tasks
            for name, amount in primary.rusage_host:  # once on each of its hosts: one host must hold it
                if name in self.pools or amount <= 0 or name in self.coming or "/" not in name:
                    continue
                if name not in self.largest and name == GPU:
                    return (f"{INVALID_GRES}: needs {name} {amount} per host but no host has GPUs (the workers "
                            f"of {self.hosts} host{'s' if self.hosts != 1 else ''} found none)")
                if amount > self.largest.get(name, 0):
                    return (f"{NOT_AVAILABLE + ': ' if name == GPU else ''}needs {name} {amount} per host, short by "
                            f"{name} {amount - self.largest.get(name, 0)} (the largest host has "
                            f"{self.largest.get(name, 0)})")
        for name, amount in need.items():
            if amount > self.total.get(name, 0):
                return (f"needs {name} {human(name, amount)}, short by {name} "
                        f"{human(name, amount - self.total[name])} (the cluster has "
                        f"{human(name, self.total[name])} in all)")
        return None

    def _hosts(self, primary: Any) -> str | None:
        """A primary held to named hosts, or spread over exactly N: can those hosts ever take it?"""
        allowed, excluded = host_limits(primary.select)
        if allowed is not None and any(n not in self.slots_of for n in allowed - excluded):
            return None  # a host it may use has not registered yet: it may join with enough
        names = sorted(self.slots_of) if allowed is None else sorted(allowed)
        names = [n for n in names if n not in excluded and n in self.slots_of]
        if allowed is not None or excluded:
            slots = sum(self.slots_of[n] for n in names)
            if primary.tasks > slots:
                where = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                return (f"needs slots {primary.tasks}, short by slots {primary.tasks - slots} (the hosts it may "
                        f"use, {where or 'none'}, have {slots})")
        wanted = primary.span_hosts or 0
        if wanted > 1 and wanted > len(names):
            return (f"needs hosts {wanted}, short by hosts {wanted - len(names)} (span[hosts={wanted}]; it may "
                    f"use {len(names)})")
        if wanted > 1:
            per = -(-primary.tasks // wanted)
            full, rest = divmod(primary.tasks, per)
            big = sum(1 for n in names if self.slots_of[n] >= per)
            some = sum(1 for n in names if self.slots_of[n] >= rest) if rest else 0
            if big < full or (rest and some < wanted):
                return (f"{per} tasks on each of {full} hosts{f' and {rest} on one more' if rest else ''}, but "
                        f"{big} of the hosts it may use have {per} slots")
        return None


@dataclass(frozen=True)
class HostFacts:
    """What a host is, for judging features and GPU models: a registered host as its values say,
    or a host of the configuration not registered yet as the configuration says (``gpus`` None)."""

    name: str
    features: frozenset[str]
    gpu_model: str | None
    gpus: int | None


def unregistered(ctl: Controller) -> list[str]:
    """Hosts the configuration names (``[hosts]``, ``[host_groups]``) whose worker has not registered."""
    cfg = ctl.config
    if not cfg.hosts and not cfg.host_groups:
        return []
    configured = set(cfg.hosts) | {m for members in cfg.host_groups.values() for m in members}
    return sorted(configured - set(ctl.hosts))


def host_facts(ctl: Controller) -> list[HostFacts]:
    """Every host the cluster has or expects, by name: a feature or GPU model given in ``xce.toml``
    counts before its host registers."""
    out: dict[str, HostFacts] = {}
    cfg = ctl.config
    for h in ctl.hosts.values():
        # What Controller.host_values gives the scheduler, without its copy of every value.
        features, traits = host_traits(cfg, h.name)
        gpus = h.resources.get(GPU, 0)
        out[h.name] = HostFacts(h.name, frozenset(h.features).union(features),
                                traits.get("gpu_model", h.resources.get("gpu_model")),
                                int(gpus) if isinstance(gpus, int) else 0)
    for name in unregistered(ctl):
        features, traits = host_traits(ctl.config, name)
        out[name] = HostFacts(name, frozenset(features), traits.get("gpu_model"), None)
    return [out[n] for n in sorted(out)]


#: Host values that are words a select compares with ``==``.
TRAITS = ("model", "type", "gpu_model")


def trait_values(ctl: Controller, trait: str) -> set[str] | None:
    """Every value of ``trait`` (``model``, ``type``, ``gpu_model``) the cluster's hosts have; None while
    a host of the configuration that does not give it has not registered (it may have any)."""
    cfg = ctl.config
    out = set()
    for name in unregistered(ctl):
        if trait not in (given := host_traits(cfg, name)[1]):
            return None
        out.add(given[trait])
    if not cfg.hosts and not cfg.host_group_settings:  # the usual case: one set comprehension
        return out | {v for h in ctl.hosts.values() if isinstance(v := h.resources.get(trait), str)}
    for h in ctl.hosts.values():
        v = host_traits(cfg, h.name)[1].get(trait, h.resources.get(trait))
        if isinstance(v, str):
            out.add(v)
    return out


def trait_problems(values_of: Any, select: Any) -> list[str]:
    """``model == X`` (``type``, ``gpu_model``) among a select's top-level ``&&`` terms, where no host has
    X: the job could never run. ``values_of(trait)`` is :func:`trait_values`."""
    from xce.core.resreq import Binary, Name, Str

    out = []
    stack = [select] if select is not None else []
    while stack:
        node = stack.pop()
        if not isinstance(node, Binary):
            continue
        if node.op == "&&":
            stack.extend((node.right, node.left))
            continue
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if node.op == "==" and isinstance(a, Name) and a.name in TRAITS and isinstance(b, Str):
                have = values_of(a.name)
                if have is not None and b.value not in have:
                    out.append(f'no host has {a.name} "{b.value}" ({a.name}s here: {", ".join(sorted(have)) or "none"})')
    return out


def constraint_problem(facts: list[HostFacts], constraint: Any, text: str) -> str | None:
    """Why no host can ever satisfy a parsed ``--constraint``, in Slurm's words, or None."""
    from xce.core.resreq.select import compile_predicate

    known = sorted(set().union(*(f.features for f in facts))) if facts else []
    unknown = [n for n in constraint.names if n not in known]
    if unknown:
        return (f"{INVALID_FEATURE}: no host has feature{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                f"(features here: {', '.join(known) or 'none'})")
    holds = compile_predicate(constraint.expr)
    if not any(holds(lambda n, f=f: 1 if n in f.features else None) for f in facts):
        return f"{NOT_AVAILABLE}: no host has the features {text!r} asks for together"
    return None


def gpu_model_problem(facts: list[HostFacts], model: str, per_task: int) -> str | None:
    """Why no host's GPUs can ever be ``model`` (``per_task`` of them), in Slurm's words, or None."""
    hosts = [f for f in facts if f.gpu_model == model]
    if not hosts:
        models = sorted({f.gpu_model for f in facts if f.gpu_model and f.gpus != 0})
        return (f"{INVALID_GRES}: no host has GPUs of model {model!r} (GPU models here: "
                f"{', '.join(models) or 'none'})")
    if per_task and all(f.gpus is not None and f.gpus < per_task for f in hosts):
        most = max(f.gpus or 0 for f in hosts)
        return (f"{INVALID_GRES}: needs {per_task} GPU(s) of model {model!r} on one host, but the hosts that have "
                f"them have at most {most}")
    return None


def host_limits(select: Any) -> tuple[set[str] | None, set[str]]:
    """The hosts a select allows by name, from its top-level ``&&`` terms: an ``||`` of
    ``hname == "h"`` (None: no such term) and every ``hname != "h"`` (the excluded ones)."""
    from xce.core.resreq import Binary, Name, Str

    allowed: set[str] | None = None
    excluded: set[str] = set()
    stack = [select] if select is not None else []
    while stack:
        node = stack.pop()
        if not isinstance(node, Binary):
            continue
        if node.op == "&&":
            stack.extend((node.left, node.right))
        elif node.op == "!=" and _hname(node, Name, Str) is not None:
            excluded.add(_hname(node, Name, Str))
        else:
            names = _either(node, Binary, Name, Str)
            if names is not None:
                allowed = names if allowed is None else allowed & names
    return allowed, excluded


def _hname(node: Any, Name: Any, Str: Any) -> str | None:
    for a, b in ((node.left, node.right), (node.right, node.left)):
        if isinstance(a, Name) and a.name == "hname" and isinstance(b, Str):
            return b.value
    return None


def _either(node: Any, Binary: Any, Name: Any, Str: Any) -> set[str] | None:
    """``hname == "a" || hname == "b" ...`` as {a, b}; None for anything else."""
    if not isinstance(node, Binary):
        return None
    if node.op == "==":
        name = _hname(node, Name, Str)
        return None if name is None else {name}
    if node.op == "||":
        left, right = _either(node.left, Binary, Name, Str), _either(node.right, Binary, Name, Str)
        return None if left is None or right is None else left | right
    return None
