"""``lsload``: each host's load indices in LSF 10.1's columns: ``status``, ``r15s``, ``r1m``,
``r15m`` (run-queue lengths), ``ut`` (CPU utilisation), ``pg`` (paging), ``ls`` (login sessions),
``it`` (idle time), ``tmp``, ``swp``, ``mem`` (free memory), from what each worker reports in its
heartbeat (``GET /v1/hosts``, ``load``). An index a worker does not measure is ``-``, as LSF shows
an index it has no value for. ``-l`` adds ``io`` and writes memory in megabytes, ``-w`` does not cut
host names, ``-I r1m:ut`` picks the indices to show."""

from __future__ import annotations

from xce.compat.lsf._args import Failed, Usage, last, main_of, parse
from xce.compat.lsf.lshosts import memory

USAGE = ("Usage: lsload [-h] [-V] [-N|-E] [-l | -w] [-R res_req] [-I index_list] [-n num_hosts] "
         "[host_name ... | cluster_name ...]")
NAME_WIDTH = 15
#: Index -> (width, right-aligned value of a host's ``load``); LSF 10.1's order and widths.
INDICES = {
    "r15s": (6, lambda load: _float(load.get("r15s"))),
    "r1m": (6, lambda load: _float(load.get("r1m"))),
    "r15m": (6, lambda load: _float(load.get("r15m"))),
    "ut": (5, lambda load: "-" if load.get("ut") is None else f"{round(float(load['ut']) * 100)}%"),
    "pg": (6, lambda load: _float(load.get("pg"))),
    "io": (6, lambda load: "-" if load.get("io") is None else str(round(float(load["io"])))),
    "ls": (4, lambda load: "-" if load.get("ls") is None else str(int(load["ls"]))),
    "it": (6, lambda load: "-" if load.get("it") is None else str(int(load["it"]))),
    "tmp": (6, lambda load: memory(load.get("tmp"))),
    "swp": (6, lambda load: memory(load.get("swp")) if load.get("swp") else ("0M" if "swp" in load else "-")),
    "mem": (6, lambda load: memory(load.get("mem"))),
}
SHORT = ("r15s", "r1m", "r15m", "ut", "pg", "ls", "it", "tmp", "swp", "mem")
LONG = ("r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem")


def _float(value) -> str:
    return "-" if value is None else f"{float(value):.1f}"


def _megabytes(value) -> str:
    """``-l``'s memory: whole megabytes, not abbreviated."""
    return "-" if not isinstance(value, (int, float)) else f"{int(value) // 2**20}M"


def status(h: dict) -> str:
    """LIM's word: a host whose worker reports is ``ok`` (closed to batch jobs or not: that is
    ``bhosts``' business); one that stopped reporting is ``unavail``."""
    return "ok" if h["status"] == "ok" else ("unreach" if h["status"] == "unreach" else "unavail")


def value(index: str, load: dict, long: bool) -> str:
    if long and index in ("tmp", "swp", "mem"):
        return _megabytes(load.get(index))
    return INDICES[index][1](load)


def table(hosts: list[dict], indices: tuple[str, ...], wide: bool, long: bool) -> list[str]:
    width = max([NAME_WIDTH, *(len(h["name"]) + 1 for h in hosts)]) if wide or long else NAME_WIDTH
    cols = [(i, max(INDICES[i][0], 7 if long and i in ("tmp", "swp", "mem") else 0)) for i in indices]
    out = [f"{'HOST_NAME':<{width}}{'status':>7}" + "".join(f"{i:>{w}}" for i, w in cols)]
    for h in hosts:
        name = h["name"] if wide or long or len(h["name"]) <= NAME_WIDTH else h["name"][:NAME_WIDTH - 1] + "*"
        load = h.get("load") or {}
        unavail = status(h) != "ok"
        out.append(f"{name:<{width}}{status(h):>7}"
                   + "".join(f"{'-' if unavail else value(i, load, long):>{w}}" for i, w in cols))
    return out


def run(argv: list[str]) -> int:
    opts, names = parse(argv, frozenset({"w", "l", "N", "E", "x", "s"}), frozenset({"R", "I", "n"}))
    from xce.compat.lsf._client import connect, request

    if opts.get("R"):
        raise Failed("-R is not offered here: name the hosts, or use `bhosts`")
    if opts.get("s"):
        raise Failed("-s: this cluster has no shared resources to list with lsload; use `xce hosts`")
    long = bool(opts.get("l"))
    indices = LONG if long else SHORT
    picked = last(opts, "I")
    if picked is not None:
        chosen = tuple(i for i in picked.split(":") if i)
        unknown = [i for i in chosen if i not in INDICES]
        if unknown or not chosen:
            raise Usage(f"{unknown[0] if unknown else picked}: Bad load index name")
        indices = chosen
    count = last(opts, "n")
    if count is not None and (not count.isdigit() or int(count) < 1):
        raise Usage(f"{count}: Bad number of hosts")
    hosts = request(connect(), "GET", "/v1/hosts")["hosts"]
    unknown = [n for n in names if n not in {h["name"] for h in hosts}]
    if unknown:
        raise Failed(f"{unknown[0]}: Unknown host")
    hosts = [h for h in hosts if not names or h["name"] in names]
    if count is not None:
        hosts = hosts[:int(count)]
    print("\n".join(table(hosts, indices, bool(opts.get("w")), long)))
    return 0


main = main_of("lsload", USAGE, run)
