"""``badmin showconf mbd``: the batch settings clients read, as ``bparams -a`` shows them. The
other subcommands administer LSF's daemons; here that is ``xceadmin``'s work, so they are refused."""

from __future__ import annotations

import sys

from xce.compat.lsf import tables
from xce.compat.lsf._args import EXIT_FAIL, Usage, main_of

USAGE = "Usage: badmin [-h] [-V] showconf mbd | showconf sbd [host_name ...]"


def run(argv: list[str]) -> int:
    if not argv:
        raise Usage("")
    if argv[0] != "showconf":
        print(f"badmin: {argv[0]}: not available through the LSF commands of this cluster; "
              "administer it with xceadmin (xceadmin --help)", file=sys.stderr)
        return EXIT_FAIL
    if argv[1:2] not in (["mbd"], ["sbd"]):
        raise Usage("showconf: give mbd or sbd")
    from xce.compat.lsf._cluster import settings_lines

    sys.stdout.write(settings_lines("MBD configuration" if argv[1] == "mbd" else "SBD configuration"))
    return 0


main = tables.with_help(main_of("badmin", USAGE, run), "badmin", USAGE)
