"""The cluster as it is, written as the cluster file ``xce sim run --cluster`` reads.

An ordinary ``xce.toml`` holding what scheduling depends on (cluster name, default queue, the
picker, queues, projects, shared resources, resource names; not TLS, tokens or privacy), plus one
``[[sim.hosts]]`` table per registered host with the values its worker reported, configuration
overrides applied (``[hosts.NAME] slots``): slots, memory (``maxmem``) and every other static
resource or attribute under ``resources``. So the simulated cluster is the real one unless someone
edits the file, and an edited file is validated by the same loader as production's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

_BARE = re.compile(r"[A-Za-z0-9_-]+")
#: Host values the ``[[sim.hosts]]`` keys carry themselves; ``mem`` is a load index (free memory now),
#: which a simulated host starts with at ``maxmem``.
_OWN = ("slots", "maxmem", "mem")
#: Sections of the configuration a simulation reads; the rest (TLS, auth, privacy, admins) stays out.
SECTIONS = ("cluster_name", "default_queue", "scheduler", "queues", "projects", "shared_resources", "resource_names")
#: Queue keys a simulation has no use for: hooks are executables on the controller's host, which a
#: simulation never runs and the machine that reads the file may not have.
SITE_ONLY = ("hooks",)


def key(k: str) -> str:
    return k if _BARE.fullmatch(k) else json.dumps(k, ensure_ascii=False)


def value(v: Any) -> str:
    """A TOML value: JSON's string escapes are TOML's (with non-ASCII kept as it is)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):  # TOML has no null: an unset key is left out
        return "{" + ", ".join(f"{key(str(k))} = {value(x)}" for k, x in v.items() if x is not None) + "}"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _table(name: str, data: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    lines += [f"{key(k)} = {value(v)}" for k, v in data.items() if v is not None]
    return lines + [""]


def render(config, hosts: Iterable[tuple[str, str, dict[str, Any]]], *, version: str = "") -> str:
    """``config``: the :class:`~xce.config.schema.ClusterConfig` in force; ``hosts``: (name, status,
    values) of each registered host, values as the scheduler sees them."""
    cfg = config.model_dump(mode="json")
    out = [f"# The cluster {cfg['cluster_name']!s} as `xce cluster export` found it (xce {version}).",
           "# Read by `xce sim run --cluster FILE` and `xce whatif`; edit it to try another cluster.", "",
           f"cluster_name = {value(cfg['cluster_name'])}", f"default_queue = {value(cfg['default_queue'])}",
           f"resource_names = {value(cfg['resource_names'])}", ""]
    out += _table("scheduler", {"job_pick_plugin": cfg["scheduler"]["job_pick_plugin"]})
    defaults = type(config.queues[next(iter(config.queues))])().model_dump(mode="json") if config.queues else {}
    for name in sorted(cfg["queues"]):
        q = {k: v for k, v in cfg["queues"][name].items() if v != defaults.get(k) and k not in SITE_ONLY}
        out += _table(f"queues.{key(name)}", q)
    for name in sorted(cfg["projects"]):
        out += _table(f"projects.{key(name)}", cfg["projects"][name])
    for name in sorted(cfg["shared_resources"]):
        out += _table(f"shared_resources.{key(name)}", cfg["shared_resources"][name])
    for name, status, values in hosts:
        slots = values.get("slots")
        if not isinstance(slots, int) or slots < 1:
            out.append(f"# host {name}: no slots, left out")
            continue
        out.append("[[sim.hosts]]")
        if status != "ok":
            out.append(f"# status when exported: {status}")
        out.append(f"name = {value(name)}")
        out.append(f"slots = {slots}")
        maxmem = values.get("maxmem")
        if isinstance(maxmem, int) and maxmem > 0:
            out.append(f"mem = {value(f'{maxmem // 1024}K')}")
        extra = {k: v for k, v in sorted(values.items()) if k not in _OWN and isinstance(v, (str, int, float))
                 and not isinstance(v, bool)}
        if extra:
            out.append(f"resources = {value(extra)}")
        if values.get("features"):  # what --constraint and select[FEATURE] match
            out.append(f"features = {value(list(values['features']))}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
