"""``bhosts``: hosts with LSF's columns and status words (``ok``, ``closed_Full``, ``closed_Adm``,
``unavail``, ``unreach``); ``-w`` names not cut."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, main_of, parse

USAGE = "Usage: bhosts [-h] [-V] [-w | -l | -e] [-x] [-X] [host_name ... | host_group ... | cluster_name ...]"
HEADER = "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV "


def status(h: dict) -> str:
    if h["status"] in ("unavail", "unreach", "down", "lost"):
        return "unavail" if h["status"] != "unreach" else "unreach"
    if h["status"] != "ok":
        return "unavail"
    if h.get("closed"):
        return "closed_Adm"
    slots = int((h.get("resources") or {}).get("slots") or 0)
    if h.get("exclusive_job") or (slots and h.get("slots_used", 0) >= slots):
        return "closed_Full"
    return "ok"


def run(argv: list[str]) -> int:
    opts, names = parse(argv, *tables.BHOSTS.lsf())
    from xce.compat.lsf._client import connect, request

    hosts = request(connect(), "GET", "/v1/hosts")["hosts"]
    unknown = [n for n in names if n not in {h["name"] for h in hosts}]
    if unknown:
        raise Failed(f"{unknown[0]}: No such host")
    wide = bool(opts.get("w"))
    lines = [HEADER]
    for h in hosts:
        if names and h["name"] not in names:
            continue
        name = h["name"] if wide or len(h["name"]) <= 18 else h["name"][:17] + "*"
        slots = (h.get("resources") or {}).get("slots")
        used = h.get("slots_used", 0)
        lines.append(f"{name:<19}{status(h):<13}{'-':>4}{slots if slots is not None else '-':>7}{used:>7}"
                     f"{used:>7}{0:>7}{0:>7}{0:>7}")
    print("\n".join(lines))
    return 0


main = tables.with_help(main_of("bhosts", USAGE, run), "bhosts", USAGE)
