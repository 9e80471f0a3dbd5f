"""``xce sim run`` against the small reference scripts of ``bench/sim_reference.py``, per picker and trace.

Issue 39 asks for the simulator to be no slower than a 100-line reference script on every trace.
Each figure times two fresh processes on the same trace and cluster, in the same run so that the
ratio survives a busy machine: ``xce sim run --picker P --out DIR --json`` (what a person types to
get per-job start times) and the reference for P writing its start times. Both are timed wall and
CPU from start to exit, peak RSS each from its own ``wait4``; the decision digest of each is the
sha256 of its (job id, start) pairs, so equal digests mean every job started at the same second.

Traces: every ``examples/traces/*.swf`` on the machine its header gives, and the wide presets of
:mod:`bench.widetrace` (10,000-100,000 hosts). Pickers: every registered one; a picker without a
reference is timed alone (``ref_*`` null).

    .venv/bin/python -m bench.sim_speed                          # everything, one JSON line each
    .venv/bin/python -m bench.sim_speed --traces lublin_256,wide_10k --pickers easy_backfill --repeat 3
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "examples" / "traces"
REFERENCE = Path(__file__).with_name("sim_reference.py")


#: The children's environment: bytecode is read as after ``pip install`` (see ``bench.live``).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


#: Starts the measured command from a bare interpreter and writes its own rusage: Linux carries a
#: process's peak RSS over fork and exec, so a child of this (numpy-loaded) process would report at
#: least this process's size, and a small reference script would look as big as the simulator.
_LAUNCH = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as fh:
    json.dump({"rc": os.waitstatus_to_exitcode(status), "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime,
               "rss_mb": ru.ru_maxrss / 1024}, fh)
"""


def _run(cmd: list[str]) -> dict:
    """Wall, CPU and peak RSS of ``cmd`` alone, and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".json") as usage:
        rc = subprocess.call([sys.executable, "-c", _LAUNCH, usage.name, *cmd], stdout=out, stderr=err, cwd=ROOT,
                             env=_ENV)
        out.seek(0)
        err.seek(0)
        got = json.loads(usage.read() or "{}")
        if rc or got.get("rc"):
            raise SystemExit(f"{' '.join(cmd)} failed ({got.get('rc', rc)}): {err.read().decode()[-2000:]}")
        got["stdout"] = out.read().decode()
        return got


def digest_of_csv(path: Path) -> str:
    """The reference's digest (``bench/sim_reference.py``) of the (job id, start) pairs in jobs.csv."""
    with path.open(newline="") as fh:
        starts = {int(r["jobid"]): int(r["start"]) for r in csv.DictReader(fh) if r["start"]}
    h = hashlib.sha256()
    for j in sorted(starts):
        h.update(f"{j} {starts[j]}\n".encode())
    return h.hexdigest()[:16]


def trace_files(names: list[str] | None, tmp: Path) -> dict[str, tuple[Path, int]]:
    """name -> (SWF file, slots) for the example traces and the wide presets asked for."""
    from bench import widetrace
    from xce.sim.swf import read_swf

    out: dict[str, tuple[Path, int]] = {}
    for path in sorted(TRACES.glob("*.swf")):
        name = path.name.removesuffix(".swf")
        if names is None or name in names:
            nodes, per = read_swf(path, max_jobs=1).machine()  # type: ignore[misc]
            out[name] = (path, nodes * per)
    for name, (_, hosts) in widetrace.PRESETS.items():
        if names is None or name in names:
            out[name] = (widetrace.write(name, tmp / f"{name}.swf"), hosts)
    unknown = sorted(set(names or ()) - set(out))
    if unknown:
        raise SystemExit(f"unknown trace(s) {', '.join(unknown)}; choose from example traces "
                         f"({', '.join(p.stem for p in TRACES.glob('*.swf'))}) or {', '.join(widetrace.PRESETS)}")
    return out


def measure(name: str, trace: Path, slots: int, picker: str, repeat: int, tmp: Path) -> dict:
    from bench.sim_reference import RULES

    best_sim: dict | None = None
    best_ref: dict | None = None
    sim_digest = ref_digest = None
    for _ in range(repeat):
        out = tmp / f"out_{name}_{picker}"
        sim = _run([sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(trace), "--hosts", str(slots),
                    "--picker", picker, "--out", str(out), "--json"])
        summary = json.loads(sim["stdout"])
        sim["loop_s"] = summary["sim_wall_s"]
        sim["jobs"] = summary["jobs_simulated"]
        sim_digest = digest_of_csv(out / "jobs.csv")
        if best_sim is None or sim["wall_s"] < best_sim["wall_s"]:
            best_sim = sim
        if picker in RULES:
            ref = _run([sys.executable, str(REFERENCE), str(trace), "--slots", str(slots), "--picker", picker])
            ref_digest = json.loads(ref["stdout"])["digest"]
            if best_ref is None or ref["wall_s"] < best_ref["wall_s"]:
                best_ref = ref
    assert best_sim is not None
    row = {"figure": "sim_vs_reference", "trace": name, "hosts": slots, "picker": picker, "jobs": best_sim["jobs"],
           "sim_wall_s": round(best_sim["wall_s"], 3), "sim_cpu_s": round(best_sim["cpu_s"], 3),
           "sim_loop_s": best_sim["loop_s"], "sim_rss_mb": round(best_sim["rss_mb"], 1), "sim_digest": sim_digest,
           "ref_wall_s": None, "ref_cpu_s": None, "ref_rss_mb": None, "ref_digest": None, "ratio_wall": None,
           "ratio_cpu": None, "same_decisions": None, "repeat": repeat, "load1": round(os.getloadavg()[0], 2)}
    if best_ref is not None:
        row.update(ref_wall_s=round(best_ref["wall_s"], 3), ref_cpu_s=round(best_ref["cpu_s"], 3),
                   ref_rss_mb=round(best_ref["rss_mb"], 1), ref_digest=ref_digest,
                   ratio_wall=round(best_sim["wall_s"] / best_ref["wall_s"], 2),
                   ratio_cpu=round(best_sim["cpu_s"] / max(best_ref["cpu_s"], 1e-3), 2),
                   same_decisions=sim_digest == ref_digest)
    return row


def run(traces: list[str] | None = None, pickers: list[str] | None = None, repeat: int = 1) -> list[dict]:
    from bench.live import _compile_package
    from xce.core.pickers import registry

    _compile_package()  # without bytecode every run would compile XCE's modules again (not the reference's one)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name, (path, slots) in trace_files(traces, tmp).items():
            for picker in pickers or registry.available():
                row = measure(name, path, slots, picker, repeat, tmp)
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sim_speed", description=__doc__.splitlines()[0])
    ap.add_argument("--traces", help="comma-separated trace names (default: all)")
    ap.add_argument("--pickers", help="comma-separated picker names (default: every registered one)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the fastest counts")
    a = ap.parse_args(argv)
    run(a.traces.split(",") if a.traces else None, a.pickers.split(",") if a.pickers else None, a.repeat)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
