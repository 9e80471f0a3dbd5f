"""``bparams``: the default queue; ``-a`` every setting clients read (``LSF_UNIT_FOR_LIMITS``,
``RESOURCE_RESERVE_PER_TASK`` ...), the same values as ``badmin showconf mbd``."""

from __future__ import annotations

from xce.compat.lsf import tables
from xce.compat.lsf._args import main_of, parse

USAGE = "Usage: bparams [-h] [-V] [-a] [-l]"


def run(argv: list[str]) -> int:
    opts, rest = parse(argv, *tables.BPARAMS.lsf())
    import sys

    from xce.compat.lsf._cluster import default_queue, settings_lines

    if opts.get("a"):
        sys.stdout.write(settings_lines("MBD configuration"))
        return 0
    if opts.get("l"):
        from xce.compat.lsf._conf import settings

        for key, value in settings(default_queue()):
            print(f"{key}:\n        {value}\n")
        return 0
    print(f"Default Queues:  {default_queue()}\nMBD_SLEEP_TIME used for calculations:  1 seconds\n"
          "Job Checking Interval:  1 seconds\nJob Accepting Interval:  0 seconds")
    return 0


main = tables.with_help(main_of("bparams", USAGE, run), "bparams", USAGE)
