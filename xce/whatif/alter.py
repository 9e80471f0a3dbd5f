"""The alternative cluster of ``xce whatif``: the exported one with another configuration, settings
changed one key at a time, hosts added or taken away, or another picker.

Everything is done on the cluster file's data and written back as TOML, so the alternative is
validated by the same loader (and gives the same line-numbered errors) as a file someone edits.
"""

from __future__ import annotations

import copy
import re
import tomllib
from typing import Any

from xce.whatif.cluster_file import key, value

#: ``--set`` accepts the singular spelling people type (``queue.normal.priority``) as well.
_ALIASES = {"queue": "queues", "project": "projects", "host": "hosts"}
_HOSTS = re.compile(r"[+-]?[0-9]+")


class AlterError(ValueError):
    """An alternative that cannot be built; ``str()`` is one line naming the option and the problem."""


def dumps(data: dict[str, Any]) -> str:
    """TOML for a cluster file's data: scalars first, then tables, ``[[sim.hosts]]`` last."""
    out: list[str] = []

    def table(prefix: str, d: dict[str, Any]) -> None:
        scalars = {k: v for k, v in d.items() if not isinstance(v, dict) and not _is_tables(v)}
        if prefix and (scalars or not d):
            out.append(f"[{prefix}]")
        out.extend(f"{key(k)} = {value(v)}" for k, v in scalars.items())
        if scalars:
            out.append("")
        for k, v in d.items():
            name = f"{prefix}.{key(k)}" if prefix else key(k)
            if isinstance(v, dict):
                table(name, v)
            elif _is_tables(v):
                for item in v:
                    out.append(f"[[{name}]]")
                    out.extend(f"{key(a)} = {value(b)}" for a, b in item.items())
                    out.append("")

    table("", data)
    return "\n".join(out).rstrip("\n") + "\n"


def _is_tables(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def parse_setting(text: str) -> tuple[list[str], Any]:
    """``queue.normal.priority=40`` -> (["queues", "normal", "priority"], 40); the value is TOML
    (``40``, ``true``, ``["a"]``, ``"x"``) or else taken as a string."""
    path, eq, raw = text.partition("=")
    parts = [p.strip() for p in path.strip().split(".")]
    if not eq or not all(parts):
        raise AlterError(f"--set {text!r}: expected KEY.PATH=VALUE, like queue.normal.priority=40")
    parts[0] = _ALIASES.get(parts[0], parts[0])
    raw = raw.strip()
    try:
        val = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        val = raw
    return parts, val


def apply_settings(data: dict[str, Any], settings: list[str]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for text in settings:
        parts, val = parse_setting(text)
        if parts[0] == "sim":
            raise AlterError(f"--set {text!r}: hosts are changed with --hosts or --config, not --set")
        node = data
        for p in parts[:-1]:
            nxt = node.setdefault(p, {})
            if not isinstance(nxt, dict):
                raise AlterError(f"--set {text!r}: {'.'.join(parts[:parts.index(p) + 1])} is not a table")
            node = nxt
        node[parts[-1]] = val
    return data


def change_hosts(data: dict[str, Any], spec: str) -> dict[str, Any]:
    """``+N``: N more hosts like the last one (named ``<its name>-whatif1``...); ``-N``: the last N gone."""
    if not _HOSTS.fullmatch(spec.strip()):
        raise AlterError(f"--hosts {spec!r}: expected +N (more hosts like the last) or -N (fewer)")
    n = int(spec)
    data = copy.deepcopy(data)
    hosts = data.get("sim", {}).get("hosts", [])
    if not hosts:
        raise AlterError("--hosts: the cluster has no host to copy")
    if n < 0:
        if -n >= len(hosts):
            raise AlterError(f"--hosts {spec}: the cluster has only {len(hosts)} host(s); at least one must stay")
        del hosts[n:]
        return data
    model = hosts[-1]
    base = str(model.get("name") or model.get("prefix") or "host")
    for k in range(1, n + 1):
        h = {k2: v for k2, v in model.items() if k2 not in ("name", "prefix", "count")}
        hosts.append({"name": f"{base}-whatif{k}", **h})
    return data


def alternative(base_text: str, *, config_text: str | None = None, settings: list[str] = (),
                hosts: str | None = None) -> str:
    """The alternative cluster file. ``config_text`` replaces the scheduling configuration (its own
    ``[[sim.hosts]]``, if it has any, replace the hosts too)."""
    data = tomllib.loads(base_text)
    if config_text is not None:
        alt = tomllib.loads(config_text)
        sim = alt.pop("sim", None) or data.get("sim")
        data = {**alt, "sim": sim}
    if settings:
        data = apply_settings(data, list(settings))
    if hosts:
        data = change_hosts(data, hosts)
    return dumps(data)
