"""``lshosts``: the static facts of each host in LSF 10.1's columns: its type, model, CPU factor, CPUs,
memory, swap, whether it is a server, and its boolean resources (the host features given in
``xce.toml`` or by ``xce worker --feature``); ``-w`` names not cut, ``-l`` one block per host, ``-gpu``
the GPUs of each host and their model."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, main_of, parse

USAGE = "Usage: lshosts [-h] [-V] [-w | -l] [-gpu] [-R res_req] [host_name ... | cluster_name ...]"
#: Title -> width (right-aligned), after HOST_NAME; as LSF 10.1 prints them.
COLUMNS = (("type", 7), ("model", 10), ("cpuf", 6), ("ncpus", 6), ("maxmem", 7), ("maxswp", 7), ("server", 7))
NAME_WIDTH = 15


def memory(n) -> str:
    """LSF's memory figures: ``1024M``, ``7.7G``; ``-`` when unknown."""
    if not isinstance(n, (int, float)) or n <= 0:
        return "-"
    if n >= 2**30:
        return f"{n / 2**30:.1f}G"
    return f"{int(n) // 2**20}M"


def facts(h: dict) -> dict[str, str]:
    r = h.get("resources") or {}
    return {"type": str(r.get("type") or "-"), "model": str(r.get("model") or "-"), "cpuf": "1.0",
            "ncpus": str(r.get("ncpus", "-")), "maxmem": memory(r.get("maxmem")), "maxswp": memory(r.get("maxswp")),
            "server": "Yes", "resources": "(" + " ".join(r.get("features") or ()) + ")"}


def _name(name: str, wide: bool) -> str:
    return name if wide or len(name) < NAME_WIDTH else name[:NAME_WIDTH - 2] + "*"


def table(hosts: list[dict], wide: bool) -> list[str]:
    width = max([NAME_WIDTH, *(len(h["name"]) + 1 for h in hosts)]) if wide else NAME_WIDTH
    out = [f"{'HOST_NAME':<{width}}" + "".join(f"{t:>{w}}" for t, w in COLUMNS) + " RESOURCES"]
    for h in hosts:
        f = facts(h)
        out.append(f"{_name(h['name'], wide):<{width}}" + "".join(f"{f[t]:>{w}}" for t, w in COLUMNS)
                   + f" {f['resources']}")
    return out


def long(hosts: list[dict]) -> list[str]:
    out: list[str] = []
    for h in hosts:
        f = facts(h)
        r = h.get("resources") or {}
        out += [f"HOST_NAME:  {h['name']}",
                "type             model  cpuf ncpus maxmem maxswp server nprocs ncores nthreads",
                f"{f['type']:<8}{f['model']:>14}{f['cpuf']:>6}{f['ncpus']:>6}{f['maxmem']:>7}{f['maxswp']:>7}"
                f"{f['server']:>7}{r.get('ncpus', '-'):>7}{r.get('ncpus', '-'):>7}{1:>9}",
                "", f"RESOURCES: {f['resources']}", "RUN_WINDOWS:  (always open)", ""]
    return out


def gpus(hosts: list[dict], wide: bool) -> list[str]:
    """``-gpu``: one line per GPU (LSF 10.1's ``lshosts -gpu``)."""
    out = [f"{'HOST_NAME':<{NAME_WIDTH}}{'gpu_id':>8}{'gpu_model':>22}{'gpu_driver':>12}{'gpu_factor':>12}"
           f"{'numa_id':>9}"]
    for h in hosts:
        r = h.get("resources") or {}
        for i in range(int(r.get("xce.io/gpu") or 0)):
            out.append(f"{_name(h['name'], wide) if i == 0 else '':<{NAME_WIDTH}}{i:>8}{r.get('gpu_model') or '-':>22}"
                       f"{'-':>12}{'-':>12}{'-':>9}")
    return out


def run(argv: list[str]) -> int:
    opts, names = parse(argv, *tables.LSHOSTS.lsf())
    from xce.compat.lsf._client import connect, request

    hosts = request(connect(), "GET", "/v1/hosts")["hosts"]
    unknown = [n for n in names if n not in {h["name"] for h in hosts}]
    if unknown:
        raise Failed(f"{unknown[0]}: Unknown host")
    if opts.get("R"):
        raise Failed("-R is not offered here: name the hosts, or use `bhosts`")
    if opts.get("s"):
        raise Failed("-s: this cluster has no shared resources to list with lshosts; use `xce hosts`")
    hosts = [h for h in hosts if not names or h["name"] in names]
    wide = bool(opts.get("w"))
    if opts.get("gpu"):
        lines = gpus(hosts, wide)
    elif opts.get("l"):
        lines = long(hosts)
    else:
        lines = table(hosts, wide)
    print("\n".join(lines))
    return 0


main = tables.with_help(main_of("lshosts", USAGE, run), "lshosts", USAGE)
