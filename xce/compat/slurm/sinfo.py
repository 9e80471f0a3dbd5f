"""``sinfo``: partitions (XCE's queues) and their nodes (hosts), grouped by state as Slurm shows them."""

from __future__ import annotations

import sys
import time

from xce.compat.slurm import _format as fmt, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse
from xce.formats import slurm_banner

PROG = "sinfo"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SINFO.getopt()
REFUSED: dict[str, str] = {}
DEFAULT = "%#P %.5a %.10l %.6D %.6t %N"
LONG = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
NODE = "%#N %.6D %#P %6t"
#: ``-N -l``: Slurm's node-oriented long format (``sinfo/opts.c``), one row per node and partition.
NODE_LONG = "%#N %.6D %#P %.11T %.4c %.8z %.6m %.8d %.6w %.8f %20E"

#: code -> (title, value of (partition, hosts of one group, state word)).
CODES = {
    "P": ("PARTITION", lambda q, hs, st: q["name"] + ("*" if q.get("default") else "")),
    "R": ("PARTITION", lambda q, hs, st: q["name"]),
    "a": ("AVAIL", lambda q, hs, st: _avail(q)),
    "l": ("TIMELIMIT", lambda q, hs, st: _limit(q.get("max_run_limit") or q.get("run_limit"))),
    "L": ("DEFAULTTIME", lambda q, hs, st: _limit(q.get("run_limit")) if q.get("run_limit") else "n/a"),
    "D": ("NODES", lambda q, hs, st: str(len(hs))),
    "t": ("STATE", lambda q, hs, st: st),
    "T": ("STATE", lambda q, hs, st: {"alloc": "allocated", "mix": "mixed", "drain": "drained"}.get(st, st)),
    "N": ("NODELIST", lambda q, hs, st: _compress([h["name"] for h in hs])),
    "n": ("HOSTNAMES", lambda q, hs, st: " ".join(h["name"] for h in hs)),
    "G": ("GRES", lambda q, hs, st: _same(hs, gres)),
    "f": ("AVAIL_FEATURES", lambda q, hs, st: _same(hs, features)),
    "b": ("ACTIVE_FEATURES", lambda q, hs, st: _same(hs, features)),
    "g": ("GROUPS", lambda q, hs, st: "all"),
    "p": ("PRIO_TIER", lambda q, hs, st: str(q.get("priority") or 0)),
    "c": ("CPUS", lambda q, hs, st: _same(hs, lambda h: str(int(h["resources"].get("slots", 0))))),
    "m": ("MEMORY", lambda q, hs, st: _same(hs, lambda h: str(int(h["resources"].get("maxmem", 0)) // 2**20))),
    "C": ("CPUS(A/I/O/T)", lambda q, hs, st: _cpus(hs)),
    "F": ("NODES(A/I/O/T)", lambda q, hs, st: _nodes(hs)),
    "s": ("JOB_SIZE", lambda q, hs, st: "1-infinite"),
    "r": ("ROOT", lambda q, hs, st: "no"),
    "h": ("OVERSUBSCRIBE", lambda q, hs, st: "NO"),
    "z": ("S:C:T", lambda q, hs, st: _same(hs, lambda h: f"1:{int(h['resources'].get('slots', 0))}:1")),
    "d": ("TMP_DISK", lambda q, hs, st: "0"),
    "w": ("WEIGHT", lambda q, hs, st: "1"),
    "E": ("REASON", lambda q, hs, st: _same(hs, _reason)),
    "O": ("CPU_LOAD", lambda q, hs, st: _same(hs, lambda h: f"{h.get('load', {}).get('r1m', 0):.2f}")),
}


#: ``-O`` names (any case) -> the ``-o`` code printing the same (sinfo's ``fmt_data``). Slurm writes its own
#: default formats so (``partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0``);
#: myqueue's ``mq config slurm`` reads ``sinfo --noheader -O CPUs,Memory,Partition``.
FIELDS = {"available": "a", "cpus": "c", "cpusload": "O", "cpusstate": "C", "defaulttime": "L", "disk": "d",
          "features": "f", "featuresact": "b", "gres": "G", "groups": "g", "memory": "m", "nodeaiot": "F",
          "nodehost": "n", "nodelist": "N", "nodes": "D", "oversubscribe": "h", "partition": "P",
          "partitionname": "R", "prioritytier": "p", "reason": "E", "root": "r", "size": "s",
          "socketcorethread": "z", "statecompact": "t", "statelong": "T", "time": "l", "weight": "w"}


def features(h: dict) -> str:
    """A node's features as Slurm lists them (``AvailableFeatures``, ``sinfo %f``): comma-separated, ``(null)``
    for none."""
    return ",".join(h["resources"].get("features") or ()) or "(null)"


def gres(h: dict) -> str:
    """A node's generic resources as Slurm writes them: ``gpu:MODEL:N`` (``gpu:N`` without a model)."""
    r = h["resources"]
    n = int(r.get("xce.io/gpu") or 0)
    if not n:
        return "(null)"
    return f"gpu:{r['gpu_model']}:{n}" if r.get("gpu_model") else f"gpu:{n}"


#: Codes whose value differs from node to node: sinfo puts nodes that differ in any shown one on rows apart.
PER_NODE = {"f": features, "b": features, "G": gres}


def _compress(names: list[str]) -> str:
    from xce.hostlist import compress

    return compress(names)


def _limit(seconds: int | None) -> str:
    return "infinite" if not seconds else fmt.duration(seconds)


def _same(hosts: list[dict], value) -> str:
    values = sorted({value(h) for h in hosts})
    return values[0] if len(values) == 1 else (f"{values[0]}+" if values else "0")


def _reason(h: dict) -> str:
    """``%E``: why a node is out (an administrator's words, or Slurm's for one not answering)."""
    if h.get("closed"):
        return str(h["closed"])
    return "Not responding" if _state(h) == "down" else "none"


def _avail(q: dict) -> str:
    """``%a``: a closed queue takes and runs nothing (Slurm's ``inact``); one outside its run
    windows takes jobs and runs none (``down``)."""
    if q.get("status", "open") != "open":
        return "inact"
    return "up" if q.get("active", True) else "down"


def _state(h: dict) -> str:
    if h.get("status") != "ok":
        return "down"
    if h.get("closed"):
        return "drain"
    used, slots = h.get("slots_used", 0), int(h["resources"].get("slots", 0))
    return "idle" if used == 0 else ("alloc" if used >= slots else "mix")


def _cpus(hosts: list[dict]) -> str:
    total = sum(int(h["resources"].get("slots", 0)) for h in hosts)
    alloc = sum(min(h.get("slots_used", 0), int(h["resources"].get("slots", 0))) for h in hosts if _state(h) != "down")
    other = sum(int(h["resources"].get("slots", 0)) for h in hosts if _state(h) in ("down", "drain"))
    return f"{alloc}/{total - alloc - other}/{other}/{total}"


def _nodes(hosts: list[dict]) -> str:
    states_ = [_state(h) for h in hosts]
    alloc = sum(s in ("alloc", "mix") for s in states_)
    other = sum(s in ("down", "drain") for s in states_)
    return f"{alloc}/{len(hosts) - alloc - other}/{other}/{len(hosts)}"


def _parts(text: str) -> list[fmt.Part]:
    """``-o`` text as parts (:func:`xce.compat.slurm._format.percent_codes`); UsageError for an unknown code."""
    try:
        return fmt.percent_codes(text, CODES, "node", sized=True)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _fields(text: str) -> list[fmt.Part]:
    """``-O`` text as parts (:func:`xce.compat.slurm._format.fields_format`); UsageError for an unknown name."""
    try:
        return fmt.fields_format(text, FIELDS, {}, "node")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    if operands:
        return _err(f"Unrecognized option: {operands[0]}")
    header, text, fields, partitions, by_node, long_ = True, None, None, None, False, False
    try:
        for name, value in opts:
            if name in REFUSED:
                return _err(REFUSED[name])
            if name == "noheader":
                header = False
            elif name == "format":
                text, fields = fmt.unquote(value or ""), None
            elif name == "Format":
                text, fields = None, fmt.unquote(value or "")
            elif name == "long":
                long_ = True
            elif name == "Node":
                by_node = True
            elif name == "partition":
                partitions = [p.strip() for p in (value or "").split(",") if p.strip()]
            elif name in ("help", "usage"):
                tables.show_help(PROG, {name}, REFUSED)
                return 0
            elif name == "version":
                sys.stdout.write("slurm 22.05.8\n")
                return 0
        if fields is not None:
            parts = _fields(fields)
        else:
            parts = _parts(text or ((NODE_LONG if long_ else NODE) if by_node else (LONG if long_ else DEFAULT)))
    except UsageError as exc:
        return _err(str(exc))
    try:
        queues, hosts = _api.partitions(_api.client())
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    queues = [q for q in queues if partitions is None or q["name"] in partitions]
    rows: list[tuple[dict, list[dict], str]] = []
    for q in queues:
        if by_node:
            rows += [(q, [h], _state(h)) for h in hosts]
            continue
        shown = [PER_NODE[code] for _, code, _, _ in parts if code in PER_NODE]
        groups: dict[tuple[str, ...], list[dict]] = {}
        for h in hosts:
            groups.setdefault((_state(h), *(value(h) for value in shown)), []).append(h)
        rows += [(q, hs, key[0]) for key, hs in groups.items()] or [(q, [], "n/a")]
    parts = [(lit, code, _fit(code, width, rows) if width == -1 else width, right)
             for lit, code, width, right in parts]
    out = [slurm_banner(time.time())] if long_ else []
    if header:
        out.append("".join(lit if code is None else fmt.cell(CODES[code][0], width, right)
                           for lit, code, width, right in parts))
    for q, hs, st in rows:
        out.append("".join(lit if code is None else fmt.cell(CODES[code][1](q, hs, st), width, right)
                           for lit, code, width, right in parts))
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    return 0


def _fit(code: str, width: int, rows) -> int:
    """``%#X``: as wide as the title or the widest value."""
    return max([len(CODES[code][0]), *(len(CODES[code][1](*r)) for r in rows)])


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
