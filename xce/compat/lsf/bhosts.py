"""``bhosts``: hosts with LSF's columns and status words (``ok``, ``closed_Full``, ``closed_Adm``,
``unavail``, ``unreach``); ``-w`` names not cut; ``-l`` LSF's long form, a block per host: its
status and slot counts, then the load it last reported (``CURRENT LOAD USED FOR SCHEDULING``) and
the thresholds (``LOAD THRESHOLD USED FOR SCHEDULING``: XCE schedules on none, so ``-``). A load
index the worker does not measure (pg, io, ls, it, tmp) is ``-``."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, main_of, parse

USAGE = "Usage: bhosts [-h] [-V] [-w | -l | -e] [-x] [-X] [host_name ... | host_group ... | cluster_name ...]"
HEADER = "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV "
#: The long form's load indices, in LSF's order, and their widths (right-aligned).
LOAD = (("r15s", 5), ("r1m", 6), ("r15m", 6), ("ut", 6), ("pg", 6), ("io", 6), ("ls", 5), ("it", 6),
        ("tmp", 6), ("swp", 6), ("mem", 6))
THRESHOLD = (("r15s", 5), ("r1m", 6), ("r15m", 6), ("ut", 5), ("pg", 8), ("io", 6), ("ls", 5), ("it", 6),
             ("tmp", 7), ("swp", 7), ("mem", 7))


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


def _counts(h: dict) -> list[str]:
    """JL/U MAX NJOBS RUN SSUSP USUSP RSV: slots, as both forms show them."""
    slots = (h.get("resources") or {}).get("slots")
    used = h.get("slots_used", 0)
    return ["-", "-" if slots is None else str(slots), str(used), str(used), "0", "0", "0"]


def _index(name: str, value) -> str:
    """A load index as LSF writes it: ``0.3``, ``4%``, ``698M``, ``31G``; ``-`` when not measured."""
    from xce.compat.lsf.lshosts import memory

    if not isinstance(value, (int, float)):
        return "-"
    if name == "ut":
        return f"{round(value * 100)}%"
    if name in ("tmp", "swp", "mem"):
        return memory(value) if value > 0 else "0M"
    return f"{value:.1f}"


def long_block(h: dict) -> list[str]:
    load = h.get("load") or {}
    slots = (h.get("resources") or {}).get("slots")
    used = h.get("slots_used", 0)
    free = "-" if slots is None else str(max(0, int(slots) - used))
    counts = _counts(h)
    return [f"HOST  {h['name']}",
            "STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW",
            f"{status(h):<15}{'1.00':>6}" + "".join(f"{c:>7}" if i else f"{c:>6}" for i, c in enumerate(counts))
            + f"{'-':>7}",
            "",
            " CURRENT LOAD USED FOR SCHEDULING:",
            " " * 12 + "".join(f"{n:>{w}}" for n, w in LOAD) + f"{'slots':>8}",
            f"{' Total':<12}" + "".join(f"{_index(n, load.get(n)):>{w}}" for n, w in LOAD) + f"{free:>8}",
            f"{' Reserved':<12}" + "".join(f"{'-':>{w}}" for _, w in LOAD) + f"{used:>8}",
            "",
            " LOAD THRESHOLD USED FOR SCHEDULING:",
            " " * 10 + "".join(f"{n:>{w}}" for n, w in THRESHOLD),
            *(f"{' ' + row:<10}" + "".join(f"{'-':>{w}}" for _, w in THRESHOLD) for row in ("loadSched", "loadStop")),
            ""]


def run(argv: list[str]) -> int:
    opts, names = parse(argv, *tables.BHOSTS.lsf())
    from xce.compat.lsf._client import connect, request

    hosts = request(connect(), "GET", "/v1/hosts")["hosts"]
    unknown = [n for n in names if n not in {h["name"] for h in hosts}]
    if unknown:
        raise Failed(f"{unknown[0]}: No such host")
    hosts = [h for h in hosts if not names or h["name"] in names]
    if opts.get("l"):
        print("\n".join(line for h in hosts for line in long_block(h)))
        return 0
    wide = bool(opts.get("w"))
    lines = [HEADER]
    for h in hosts:
        name = h["name"] if wide or len(h["name"]) <= 18 else h["name"][:17] + "*"
        lines.append(f"{name:<19}{status(h):<13}" + "".join(f"{c:>4}" if i == 0 else f"{c:>7}"
                                                              for i, c in enumerate(_counts(h))))
    print("\n".join(lines))
    return 0


main = tables.with_help(main_of("bhosts", USAGE, run), "bhosts", USAGE)
