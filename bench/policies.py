"""The backfilling pickers side by side on the shipped traces (issue 40): one JSON line per
picker and trace, with mean and p95 wait, maximum wait, mean bounded slowdown (tau 10 s) and
utilisation, as ``xce sim run`` computes them.

    python -m bench.policies                      # every trace of examples/traces, every picker
    python -m bench.policies lublin_256.swf easy_backfill,easy_aged_sjf
    python -m bench.policies --heldout            # the held-out traces (HELDOUT), every picker
    python -m bench.policies --heldout L2,W1 easy_backfill,easy_aged_sjf

Each trace runs on the machine its header describes, hosts of one slot (as the reference tests).

``--heldout``: the shipped traces are the ones ``easy_aged_sjf`` was tuned on, so the issue's
criteria (mean bounded slowdown at least 20% under ``easy_backfill``'s, maximum wait no longer) are
also checked on synthetic traces it has never seen: HELDOUT below, each named by generator, size,
load and seed (deterministic: the same trace on every machine). Each row then also carries the
ratios to ``easy_backfill`` on the same trace (``bsld_ratio``, ``wait_max_ratio``) when
``easy_backfill`` is among the pickers and runs first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TRACES = Path(__file__).resolve().parents[1] / "examples" / "traces"
PICKERS = ("easy_backfill", "easy_backfill_shadow", "easy_sjbf", "easy_pp", "easy_aged_sjf")
KEYS = ("wait_mean_s", "wait_p95_s", "wait_max_s", "bounded_slowdown_mean", "utilization", "sim_wall_s")


#: name -> (generator, keyword arguments). L: bench.lublin (Lublin-Feitelson sizes and run times,
#: Poisson arrivals at the load; "user" estimates are rounded overestimates, "exact" none, i.e. the
#: run time). W: xce.sim.synthetic.generate_wide (powers-of-two sizes up to the machine, log-uniform
#: run times, requested time 2 x run rounded up to the hour). S: xce.sim.synthetic.generate (serial
#: jobs, exponential run times, requested time 2 x run).
HELDOUT: dict[str, tuple[str, dict]] = {
    "L1": ("lublin", dict(jobs=4000, slots=256, load=0.9, seed=101, estimates="exact")),
    "L2": ("lublin", dict(jobs=4000, slots=512, load=0.95, seed=102, estimates="user")),
    "L3": ("lublin", dict(jobs=4000, slots=1024, load=0.9, seed=103, estimates="user")),
    "L4": ("lublin", dict(jobs=4000, slots=128, load=0.95, seed=104, estimates="exact")),
    "L5": ("lublin", dict(jobs=4000, slots=256, load=0.85, seed=105, estimates="user")),
    "W1": ("wide", dict(jobs=3000, nodes=256, load=0.9, seed=201)),
    "W2": ("wide", dict(jobs=3000, nodes=1024, load=0.95, seed=202)),
    "S1": ("serial", dict(jobs=4000, slots=128, load=0.95, seed=301)),
}


def heldout(name: str):
    """The held-out trace ``name`` of HELDOUT, generated in memory."""
    from bench import lublin
    from xce.sim import synthetic

    kind, kw = HELDOUT[name]
    make = {"lublin": lublin.generate, "wide": synthetic.generate_wide, "serial": synthetic.generate}[kind]
    trace = make(**kw)
    trace.source = f"{name}: {trace.source}"
    return trace


def measure(trace_path, picker: str, label: str | None = None) -> dict:
    """One picker on one trace: a path of an SWF file, or a trace already in memory."""
    from xce.sim import read_swf, simulate, uniform_cluster
    from xce.sim.report import summary

    trace = read_swf(trace_path) if isinstance(trace_path, (str, Path)) else trace_path
    nodes, slots = trace.machine()
    hosts = nodes * slots
    s = summary(simulate(trace, uniform_cluster(hosts, 1, None).with_picker(picker)))
    name = label or (trace_path.name if isinstance(trace_path, Path) else trace.source)
    return {"figure": "policy", "trace": name, "hosts": hosts, "picker": picker,
            **{k: s[k] for k in KEYS}}


def run_heldout(names=None, pickers=PICKERS) -> list[dict]:
    rows = []
    for name in names or HELDOUT:
        trace = heldout(name)
        base = None
        for picker in pickers:
            row = measure(trace, picker, label=name)
            row["jobs"] = len(trace)
            if picker == "easy_backfill":
                base = row
            if base is not None:
                row["bsld_ratio"] = round(row["bounded_slowdown_mean"] / base["bounded_slowdown_mean"], 4)
                row["wait_max_ratio"] = round(row["wait_max_s"] / max(1, base["wait_max_s"]), 4)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def run(traces=None, pickers=PICKERS) -> list[dict]:
    rows = []
    for path in traces or sorted(TRACES.glob("*.swf")):
        for picker in pickers:
            row = measure(path, picker)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--heldout":
        names = args[1].split(",") if len(args) > 1 and args[1] != "all" else None
        unknown = [n for n in names or () if n not in HELDOUT]
        if unknown:
            raise SystemExit(f"unknown held-out trace {unknown[0]!r} (known: {', '.join(HELDOUT)})")
        run_heldout(names, tuple(args[2].split(",")) if len(args) > 2 else PICKERS)
        raise SystemExit(0)
    run([TRACES / args[0]] if args else None, tuple(args[1].split(",")) if len(args) > 1 else PICKERS)
