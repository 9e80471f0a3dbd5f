"""``lsid``: the version line clients read (they switch to ``-json`` above 10.1.0.2), the
cluster's name and its master host."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import VERSION, Usage, main_of

USAGE = "Usage: lsid [-h] [-V]"


def run(argv: list[str]) -> int:
    if argv:
        raise Usage(f"illegal option -- {argv[0].lstrip('-')[:1] or argv[0]}")
    from xce.compat.lsf._cluster import identity

    me = identity()
    print(f"{VERSION}\nLSF commands answered by XCE.\n\nMy cluster name is {me['cluster']}\n"
          f"My master name is {me['master']}")
    return 0


main = tables.with_help(main_of("lsid", USAGE, run), "lsid", USAGE)
