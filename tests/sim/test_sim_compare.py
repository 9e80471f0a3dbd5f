"""``xce sim compare``: pickers side by side on one trace, each figure checked against jobs.csv.

The figures of the table are recomputed here from the per-job CSV that ``xce sim run`` writes for
the same picker, trace and cluster, with the textbook definitions written out again (nearest-rank
p95, bounded slowdown max(1, (wait + run) / max(run, 10 s)), utilization = processor-seconds over
slots x span), so a mistake in the shared metrics module cannot hide behind itself.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from xce.cli.main import XCE
from xce.core.pickers import registry
from xce.testing.cli import invoke

ROOT = Path(__file__).resolve().parents[2]
LUBLIN = ROOT / "examples" / "traces" / "lublin_256.swf"
LANL = ROOT / "examples" / "traces" / "LANL-CM5-1994-4.1-cln.first155.swf"
#: lublin_256's first jobs on a machine a quarter its size: a queue builds, so the pickers differ.
CUT = ["--max-jobs", "300", "--hosts", "64"]


def _compare(*args):
    return invoke(XCE, ["sim", "compare", *map(str, args)])


def _from_csv(path: Path, slots: int) -> dict:
    rows = [r for r in csv.DictReader(path.open()) if r["end"]]
    waits = sorted(int(r["start"]) - int(r["submit"]) for r in rows)
    bslds = [max(1.0, (int(r["end"]) - int(r["submit"])) / max(int(r["run"]), 10)) for r in rows]
    span = max(int(r["end"]) for r in rows) - min(int(r["submit"]) for r in rows)
    work = sum(int(r["tasks"]) * int(r["run"]) for r in rows)
    return {"jobs_finished": len(rows), "wait_mean_s": sum(waits) / len(waits),
            "wait_p95_s": waits[math.ceil(0.95 * len(waits)) - 1], "wait_max_s": waits[-1],
            "bounded_slowdown_mean": sum(bslds) / len(bslds), "utilization": work / (slots * span)}


def test_every_figure_matches_the_per_job_csv_and_ratios_are_to_easy(tmp_path):
    res = _compare(LUBLIN, "--pickers", "strict_fcfs,easy_backfill", *CUT, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["baseline"] == "easy_backfill"
    table = {row["picker"]: row for row in doc["table"]}
    assert list(table) == ["strict_fcfs", "easy_backfill"]
    for picker, row in table.items():
        out = tmp_path / picker
        run = invoke(XCE, ["sim", "run", "--workload", str(LUBLIN), *CUT, "--picker", picker, "--out", str(out),
                           "--json"])
        assert run.exit_code == 0, run.output
        expected = _from_csv(out / "jobs.csv", slots=64)
        assert expected["jobs_finished"] > 250 and expected["wait_mean_s"] > 0
        for key, value in expected.items():
            assert row[key] == pytest.approx(value, rel=1e-9), (picker, key)
    strict, easy = table["strict_fcfs"], table["easy_backfill"]
    assert easy["vs_easy_backfill"] == {k: 1.0 for k in easy["vs_easy_backfill"]}
    assert strict["vs_easy_backfill"]["bounded_slowdown_mean"] == pytest.approx(
        strict["bounded_slowdown_mean"] / easy["bounded_slowdown_mean"])
    assert strict["vs_easy_backfill"]["wait_max_s"] == pytest.approx(strict["wait_max_s"] / easy["wait_max_s"])
    # Backfilling exists to beat strict FCFS on this queue: the comparison must show it.
    assert strict["bounded_slowdown_mean"] > easy["bounded_slowdown_mean"]


def test_default_runs_every_registered_picker_and_draws_the_wait_distribution(tmp_path):
    plot = tmp_path / "waits.png"
    res = _compare(LANL, "--max-jobs", "60", "--plot", plot)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["PICKER", "MEAN", "WAIT", "P95"] and "MAX WAIT" in lines[0]
    assert "BSLD/EASY" in lines[0]
    pickers = [line.split()[0] for line in lines[1:1 + len(registry.available())]]
    assert pickers[0] == "easy_backfill" and sorted(pickers) == sorted(registry.available())
    easy_row = lines[1].split()
    assert easy_row[-5:-2] == ["1.00x", "1.00x", "1.00x"]  # wait, max wait and bsld over themselves
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    assert lines[-1] == f"Wrote {plot}"


def test_without_easy_the_ratios_are_left_out():
    res = _compare(LANL, "--max-jobs", "40", "--pickers", "strict_fcfs", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["table"][0]["vs_easy_backfill"] is None


@pytest.mark.parametrize("args,message,code", [
    (["/nonexistent/trace.swf"], "xce sim compare: cannot read the workload /nonexistent/trace.swf: "
                                 "No such file or directory", 1),
    ([LANL, "--pickers", "easy_backfill,nope"], "xce sim compare: --pickers: unknown picker 'nope' (registered: ", 2),
    ([LANL, "--plot", "waits.gif"], "xce sim compare: --plot: the file's suffix names its format, one of "
                                    ".png, .svg, .pdf; got 'waits.gif'", 2),
    ([LANL, "--pickers", "strict_fcfs,strict_fcfs"], "xce sim compare: --pickers: strict_fcfs named twice", 2),
])
def test_bad_input_is_one_line_and_a_nonzero_exit(args, message, code):
    res = _compare(*args)
    assert res.exit_code == code
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), res.stderr
    assert res.stdout == ""
