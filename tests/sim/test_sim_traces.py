"""The archive traces end to end: every job accounted for, causality, and no host over its slots."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from xce.sim.hostlist import expand

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces"


def _job_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith(";"))


def _check_slots(rows, slots_per_host: int) -> None:
    """Sweep start/end events per host; an end at t frees its slots before a start at t takes them."""
    events: dict[str, list[tuple[int, int, int]]] = {}
    for r in rows:
        if not r["start"]:
            continue
        for host, tasks in expand(r["hosts"]):
            events.setdefault(host, []).append((int(r["start"]), 1, int(tasks)))
            events.setdefault(host, []).append((int(r["end"]), 0, -int(tasks)))
    assert events
    for host, evs in events.items():
        busy = 0
        for _, _, delta in sorted(evs):
            busy += delta
            assert busy <= slots_per_host, f"{host} runs {busy} tasks on {slots_per_host} slot(s)"


@pytest.mark.slow
@pytest.mark.parametrize("name,hosts", [("NASA-iPSC-1993-3.1-cln.swf", 128), ("lublin_256.swf", 256)])
def test_trace_end_to_end(tmp_path, name, hosts):
    path = TRACES / name
    out = subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(path),
                          "--out", str(tmp_path), "--json"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["hosts"] == hosts and s["slots"] == hosts
    assert s["jobs_simulated"] + s["skipped_total"] == s["job_lines"] == _job_lines(path)
    assert s["jobs_started"] == s["jobs_simulated"] and s["jobs_never_started"] == 0
    rows = list(csv.DictReader(open(tmp_path / "jobs.csv")))
    assert len(rows) == s["jobs_simulated"]
    for r in rows:
        assert int(r["start"]) >= int(r["submit"])
        assert int(r["end"]) == int(r["start"]) + int(r["run"])
        assert sum(t for _, t in expand(r["hosts"])) == int(r["tasks"])
    _check_slots(rows, 1)
