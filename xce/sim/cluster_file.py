"""The simulated machine: hosts with their resources, and the scheduling configuration.

A cluster file is an ordinary ``xce.toml`` (queues, projects, picker: the same schema and the
same error messages as production, so a policy tried here can be deployed unchanged) plus one
``[sim]`` table that says which hosts exist, since in a simulation no worker reports them::

    [[sim.hosts]]
    prefix = "node"      # node001 ... node128
    count = 128
    slots = 1
    mem = "32G"          # optional; without it the trace's memory requests are not enforced
    resources = { type = "X86_64", "example.com/gpu" = 2 }   # optional: attributes and other resources
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xce.core.features import feature_problem
from xce.core.specs import HostSpec, QueueSpec, SchedConfig

if TYPE_CHECKING:
    from xce.config.loader import ConfigError

# The configuration package (pydantic) is imported only when a cluster file is read: a run with
# --hosts does not pay for it.

#: More hosts than any machine has; a typo of a few digits must not exhaust memory.
MAX_HOSTS = 1_000_000


def parse_size(size: str | int) -> int:
    """``"32G"`` -> bytes, in the one quantity grammar (:mod:`xce.core.quantity`): a bare number is MiB."""
    from xce.core.quantity import parse_quantity

    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise ValueError(f"quantity {size!r} for \"mem\": expected a text such as \"32G\" or a whole number of MiB")
    amount = parse_quantity("mem", str(size))  # QuantityError is a ValueError
    if amount <= 0:
        raise ValueError(f'quantity "{size}" for "mem": expected a positive amount, e.g. 32G')
    return amount


@dataclass(slots=True)
class SimCluster:
    hosts: list[HostSpec]
    config: SchedConfig = field(default_factory=lambda: SchedConfig(queues=(QueueSpec(name="normal"),)))
    default_queue: str = "normal"

    @property
    def total_slots(self) -> int:
        return sum(int(h.values.get("slots", 0)) for h in self.hosts)

    @property
    def has_mem(self) -> bool:
        """Whether memory is enforced: requests for memory on a cluster without it would never fit."""
        return any("mem" in h.values for h in self.hosts)

    def with_picker(self, name: str | None) -> "SimCluster":
        if not name:
            return self
        return replace(self, config=replace(self.config, job_pick_plugin=name))

    def with_queues(self, names: list[str]) -> "SimCluster":
        """Add queues the trace uses but the configuration does not define (priority 0)."""
        have = {q.name for q in self.config.queues}
        extra = tuple(QueueSpec(name=n) for n in sorted(set(names) - have))
        if not extra:
            return self
        queues = tuple(sorted(self.config.queues + extra, key=lambda q: q.name))
        return replace(self, config=replace(self.config, queues=queues))


def _host_values(slots: int, mem: int | None) -> dict[str, Any]:
    values: dict[str, Any] = {"slots": slots, "ncpus": slots}
    if mem is not None:
        values["maxmem"] = mem
        values["mem"] = mem
    return values


def host_names(prefix: str, count: int) -> list[str]:
    """Zero-padded so that the core's host name order is the numeric order."""
    width = max(3, len(str(count)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, count + 1)]


def uniform_cluster(hosts: int, slots_per_host: int, mem_per_host: int | None = None) -> SimCluster:
    if hosts < 1 or slots_per_host < 1:
        raise ValueError(f"a cluster needs at least one host and one slot per host, got {hosts} x {slots_per_host}")
    return SimCluster(hosts=[HostSpec(name=n, values=_host_values(slots_per_host, mem_per_host))
                             for n in host_names("h", hosts)])


def _sim_hosts(sim: Any, source: str) -> list[HostSpec]:
    from xce.config.loader import ConfigError, ConfigIssue

    def bad(where: str, msg: str) -> ConfigError:
        return ConfigError(source, [ConfigIssue(where, msg)])

    if not isinstance(sim, dict) or not isinstance(sim.get("hosts"), list) or not sim["hosts"]:
        raise bad("sim.hosts", "expected at least one [[sim.hosts]] table (name or prefix+count, slots, mem)")
    unknown = sorted(set(sim) - {"hosts"})
    if unknown:
        raise bad("sim", f"unknown key(s) {', '.join(unknown)} (expected: hosts)")
    out: list[HostSpec] = []
    for i, h in enumerate(sim["hosts"]):
        where = f"sim.hosts[{i}]"
        if not isinstance(h, dict):
            raise bad(where, "expected a table")
        extra = sorted(set(h) - {"name", "prefix", "count", "slots", "mem", "resources", "features"})
        if extra:
            raise bad(where, f"unknown key(s) {', '.join(extra)} (expected: name or prefix+count, slots, mem, "
                             "resources, features)")
        features = h.get("features", [])
        if not isinstance(features, list) or any(feature_problem(f) for f in features):
            raise bad(f"{where}.features", "expected a list of feature names (letters, digits and '_'), "
                                           "as `features` in [hosts.NAME]")
        resources = h.get("resources", {})
        if not isinstance(resources, dict):
            raise bad(f"{where}.resources", "expected a table of name = value (type = \"X86_64\", "
                                            "\"example.com/gpu\" = 2)")
        for rname, rvalue in resources.items():
            if rname in ("slots", "mem", "maxmem"):
                raise bad(f"{where}.resources.{rname}", f"{rname} is set by the host's own key, not in resources")
            if isinstance(rvalue, bool) or not isinstance(rvalue, (str, int, float)):
                raise bad(f"{where}.resources.{rname}", f"expected a number or a string, got {rvalue!r}")
        slots = h.get("slots", 1)
        if not isinstance(slots, int) or slots < 1:
            raise bad(f"{where}.slots", f"expected an integer >= 1, got {slots!r}")
        try:
            mem = parse_size(h["mem"]) if "mem" in h else None
        except ValueError as exc:
            raise bad(f"{where}.mem", str(exc)) from None
        if "name" in h:
            names = [str(h["name"])]
        elif "prefix" in h and isinstance(h.get("count"), int) and 1 <= h["count"] <= MAX_HOSTS:
            names = host_names(str(h["prefix"]), h["count"])
        else:
            raise bad(where, f"expected either name = \"...\" or prefix = \"...\" with 1 <= count <= {MAX_HOSTS}")
        values = {**_host_values(slots, mem), **resources, **({"features": sorted(features)} if features else {})}
        out += [HostSpec(name=n, values=values) for n in names]
    seen: set[str] = set()
    for spec in out:
        if spec.name in seen:
            raise bad("sim.hosts", f"host {spec.name!r} is defined twice")
        seen.add(spec.name)
    return out


def parse_cluster_text(text: str, source: str = "<string>") -> SimCluster:
    """Validate the xce.toml part with the production loader (line numbers and all), then ``[sim]``."""
    import tomllib

    from xce.config.convert import to_sched_config
    from xce.config.loader import ConfigError, parse_config
    from xce.config.schema import ClusterConfig

    try:
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        parse_config(text, source)  # raises the loader's error, with its position
        raise
    sim = raw.pop("sim", None)
    try:
        cfg = parse_config(text, source)
    except ConfigError as exc:
        others = [i for i in exc.issues if i.path != "sim" and not i.path.startswith("sim.")]
        if others:
            raise ConfigError(source, others) from None
        cfg = ClusterConfig.model_validate(raw, strict=True)
    hosts = _sim_hosts(sim, source)
    return SimCluster(hosts=hosts, config=to_sched_config(cfg), default_queue=cfg.default_queue)


def load_cluster_file(path: str | Path) -> SimCluster:
    from xce.config.loader import ConfigError, ConfigIssue

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), [ConfigIssue("", f"cannot read the file: {exc.strerror or exc}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(str(path), [ConfigIssue("", f"not UTF-8 text at line {line} (byte {exc.start}); TOML files "
                                                      "must be UTF-8", line)]) from None
    return parse_cluster_text(text, str(path))
