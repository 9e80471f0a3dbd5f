"""``lsclusters`` (``-w``: names not cut): this one cluster, ``ok``, its master and host count."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import Usage, main_of, parse

USAGE = "Usage: lsclusters [-h] [-V] [-l | -w] [cluster_name ...]"
ADMIN = "xceadmin"


def _cut(text: str, width: int, wide: bool) -> str:
    return text if wide or len(text) <= width else text[:width - 1] + "*"


def run(argv: list[str]) -> int:
    opts, names = parse(argv, *tables.LSCLUSTERS.lsf())
    from xce.compat.lsf._cluster import identity

    me = identity()
    if names and me["cluster"] not in names:
        raise Usage(f"{names[0]}: No such cluster")
    wide = bool(opts.get("w"))
    if opts.get("l"):
        print(f"CLUSTER_NAME: {me['cluster']}\nLSF administrators: {ADMIN}\nMaster host: {me['master']}\n"
              f"Status: ok\nNumber of hosts: {me['hosts']}\nNumber of servers: {me['hosts']}")
        return 0
    name, master = _cut(me["cluster"], 14, wide), _cut(me["master"], 17, wide)
    print(f"{'CLUSTER_NAME':<15}{'STATUS':<9}{'MASTER_HOST':<18}{'ADMIN':>13}{'HOSTS':>9}{'SERVERS':>9}")
    print(f"{name:<15}{'ok':<9}{master:<18}{ADMIN:>13}{me['hosts']:>9}{me['hosts']:>9}")
    return 0


main = tables.with_help(main_of("lsclusters", USAGE, run), "lsclusters", USAGE)
