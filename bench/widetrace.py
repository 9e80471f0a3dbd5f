"""Synthetic wide-job traces of 10,000 to 100,000 hosts, the shape that makes per-host work show.

Each preset is :func:`xce.sim.synthetic.generate_wide` (sizes spread over powers of two up to the
whole machine, log-uniform run times, deterministic from its seed: the same bytes on every
machine) at a fixed size, so that a figure names its trace by preset and seed alone.

    .venv/bin/python -m bench.widetrace wide_10k /tmp/wide_10k.swf [--seed 1]
"""

from __future__ import annotations

import sys
from pathlib import Path

#: name -> (jobs, hosts). One slot per host: every job of size n spans n hosts.
PRESETS: dict[str, tuple[int, int]] = {
    "wide_10k": (2_000, 10_000),
    "wide_50k": (1_000, 50_000),
    "wide_100k": (1_000, 100_000),
}


def write(name: str, path: str | Path, seed: int = 1) -> Path:
    """Write preset ``name`` as an SWF file (its header gives the machine) and return the path."""
    from xce.sim.synthetic import generate_wide, write_swf

    jobs, hosts = PRESETS[name]
    write_swf(generate_wide(jobs=jobs, nodes=hosts, procs_per_node=1, load=0.85, seed=seed), path)
    return Path(path)


if __name__ == "__main__":
    args = sys.argv[1:]
    seed = 1
    if "--seed" in args:
        k = args.index("--seed")
        seed = int(args[k + 1])
        del args[k:k + 2]
    if len(args) != 2 or args[0] not in PRESETS:
        raise SystemExit(f"usage: python -m bench.widetrace {{{','.join(PRESETS)}}} OUT.swf [--seed N]")
    print(write(args[0], args[1], seed))
