"""What ``xce sim run`` costs besides its loop: modules it does not need stay unimported, and the
cheaper jobs.csv and summary write what csv.writer and numpy would have, byte for byte."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

from xce.sim import metrics
from xce.sim.cluster_file import uniform_cluster
from xce.sim.engine import runs_for, simulate
from xce.sim.report import write_jobs_csv
from xce.sim.swf import parse_lines
from xce.sim.workload import WorkloadNames

ROOT = Path(__file__).resolve().parents[2]


def _swf(jobs: list[tuple[int, int, int, int, int]]) -> list[str]:
    """SWF lines of (submit, run, procs, requested time, used memory KB) jobs, numbered from 1."""
    return [f"{j} {sub} -1 {run} {procs} -1 {mem} {procs} {req} -1 1 {j % 3} 1 -1 0 -1 -1 -1"
            for j, (sub, run, procs, req, mem) in enumerate(jobs, 1)]


def _run_and_look(tmp_path: Path, env_extra: dict[str, str]) -> dict:
    """``python -m xce.cli.sim_cmd run`` on a small trace with no memory figures; what the process
    had loaded, how many threads it ran, whether OPENBLAS_NUM_THREADS was set and the collector's
    state, at its end."""
    trace = tmp_path / "t.swf"
    trace.write_text("\n".join(_swf([(10 * i, 50 + i, 1 + i % 4, 100, -1) for i in range(40)])) + "\n")
    code = ("import gc, json, os, runpy, sys\n"
            "try:\n"
            "    runpy.run_module('xce.cli.sim_cmd', run_name='__main__')\n"
            "finally:\n"
            "    threads = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else None\n"
            f"    open({str(tmp_path / 'seen.json')!r}, 'w').write(json.dumps({{'modules': sorted(sys.modules), "
            "'threads': threads, 'env': os.environ.get('OPENBLAS_NUM_THREADS'), 'gc': gc.isenabled(), "
            "'frozen': gc.get_freeze_count()}))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env_extra
    r = subprocess.run([sys.executable, "-c", code, "run", "--workload", str(trace), "--hosts", "4", "--out",
                        str(tmp_path / "out"), "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["jobs_finished"] == 40
    return json.loads((tmp_path / "seen.json").read_text())


def test_a_run_without_memory_figures_imports_no_drift_no_decompressor_no_numpy_ma(tmp_path):
    loaded = set(_run_and_look(tmp_path, {})["modules"])
    assert "xce.sim.engine" in loaded
    assert not loaded & {"numpy.ma", "xce.accounting.drift", "statistics", "gzip", "bz2", "lzma"}


def test_loading_starts_no_blas_threads_and_freezes_what_the_imports_made(tmp_path):
    """OpenBLAS's pool costs more CPU than a small run (unless the user asks for one, the environment
    is left as it was found); the collector is on again, the modules' objects out of its way."""
    seen = _run_and_look(tmp_path, {})
    assert seen["env"] is None
    if seen["threads"] is not None:
        assert seen["threads"] == 1
    assert seen["gc"] and seen["frozen"] > 10_000
    assert _run_and_look(tmp_path, {"OPENBLAS_NUM_THREADS": "2"})["env"] == "2"


def test_linear_percentile_is_numpys_to_the_last_bit():
    rng = random.Random(39)
    for n in [1, 2, 3, 4, 5, 19, 20, 21, 100, 1001, 18239]:
        for kind in ("float", "ties", "int"):
            if kind == "float":
                values = np.array([rng.lognormvariate(0, 3) for _ in range(n)])
            elif kind == "ties":
                values = np.array([float(rng.choice((1.0, 1.0, 2.5, 1e6))) for _ in range(n)])
            else:
                values = np.array([max(1.0, rng.randrange(0, 10**9) / rng.choice((1, 7, 10))) for _ in range(n)])
            for q in (0, 1, 5, 25, 50, 75, 90, 95, 99, 99.9, 100):
                want = float(np.percentile(values, q))
                got = metrics.linear_percentile(values, q)
                assert got == want and repr(got) == repr(want), (n, kind, q)


def _reference_jobs_csv(result, path) -> None:
    """jobs.csv as csv.writer wrote it, one list per row (the layout before rows were formatted by hand)."""
    tr = result.trace
    runs = runs_for(tr)
    named = tr.names.user if tr.names is not None else None
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["jobid", "user", "queue", "submit", "start", "end", "wait", "run", "requested", "bsld", "tasks",
                    "hosts", "preemptions"])
        for i in range(len(tr)):
            s, e, sub, r, req = result.start[i], result.end[i], tr.submit[i], runs[i], tr.req_time[i]
            user = named[i] if named is not None else (f"u{tr.user[i]}" if tr.user[i] >= 0 else "unknown")
            hosts = result.placement.text(i)
            if s >= 0:
                bsld = f"{metrics.bounded_slowdown(e - sub - r, r):.4g}" if e >= 0 else ""
                w.writerow([tr.jobid[i], user, result.queue_of[i], sub, s, e if e >= 0 else "", s - sub, r,
                            req if req > 0 else "", bsld, tr.procs[i], hosts, result.preemptions[i]])
            else:
                w.writerow([tr.jobid[i], user, result.queue_of[i], sub, "", "", "", r, req if req > 0 else "", "",
                            tr.procs[i], hosts, result.preemptions[i]])


def test_jobs_csv_rows_are_what_csv_writer_writes(tmp_path):
    """Every kind of row (ran, cut at its run limit, never started, started but never ended) and
    text fields csv must quote, in the full layout (the compact one is checked by expanding it)."""
    jobs = [(0, 100, 2, 50, -1), (0, 30, 1, -1, -1), (5, 7, 4, 10, -1), (9, 0, 1, 0, -1), (9, 3, 3, 600, -1),
            (20, 1000, 4, 2000, -1), (21, 5, 1, 5, -1)]
    tr = parse_lines(_swf(jobs))
    result = simulate(tr, uniform_cluster(4, 1))
    assert result.start[3] >= 0 and result.end[3] >= 0
    result.start[6] = result.end[6] = -1  # never started
    result.end[5] = -1  # still running when the trace ended
    result.queue_of[1] = 'with "quotes", and a comma'
    result.queue_of[2] = "line\nbreak"
    tr.names = WorkloadNames(user=["a", "b,c", "", 'd"', "e\r", "f", "g h"])
    write_jobs_csv(result, tmp_path / "got.csv", full_placement=True)
    _reference_jobs_csv(result, tmp_path / "want.csv")
    assert (tmp_path / "got.csv").read_bytes() == (tmp_path / "want.csv").read_bytes()
    with open(tmp_path / "got.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert [r[1] for r in rows[1:]] == ["a", "b,c", "", 'd"', "e\r", "f", "g h"]
    assert rows[7][4:7] == ["", "", ""] and rows[6][5] == "" and rows[6][9] == ""
