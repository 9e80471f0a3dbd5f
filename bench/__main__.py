"""``python -m bench [rounds|replay|sim|live|ui|workload|all]``: every figure as one JSON line, then a table;
all of them also go to ``bench/results.json``.

Benchmarks are run by hand or by ``make bench``; they are never timed tests.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path

SUITES = {
    "rounds": "bench.rounds",
    "replay": "bench.replay",
    "sim": "bench.simulation",
    "live": "bench.live",
    "peer": "bench.peer",
    "ui": "bench.ui",
    "workload": "bench.workload",
}


def _run_suite(name: str) -> list[dict]:
    module = importlib.import_module(SUITES[name])
    rows = module.run()
    if name == "rounds":
        row = module.pend_rate_with_cache()
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _table(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        key = r.get("figure", "?")
        rest = ", ".join(f"{k}={v}" for k, v in r.items() if k != "figure")
        lines.append(f"{key:<28} {rest}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    wanted = argv or ["all"]
    names = list(SUITES) if wanted == ["all"] else wanted
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        print(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(SUITES)} or all", file=sys.stderr)
        return 2
    results: dict = {"machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "figures": []}
    for name in names:
        results["figures"].extend(_run_suite(name))
    out = Path(__file__).parent / "results.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(_table(results["figures"]))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
