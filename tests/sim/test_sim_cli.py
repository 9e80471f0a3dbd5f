import csv
import json
import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from xce.cli.sim_cmd import register

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _app():
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    register(app)
    return app


def test_json_summary_and_files(tmp_path):
    res = CliRunner().invoke(_app(), ["sim", "run", "--workload", str(DATA / "hand.swf"), "--hosts", "2",
                                      "--slots-per-host", "2", "--json", "--out", str(tmp_path), "--no-plots"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["job_lines"] == 11 and s["jobs_simulated"] == 8 and s["skipped_total"] == 3
    assert s["jobs_never_started"] == 1 and s["never_started_jobids"] == [9]
    assert s["peak_queue_length"] >= 2 and s["makespan_s"] == 210
    for key in ("wait_mean_s", "wait_median_s", "wait_p95_s", "bounded_slowdown_mean", "utilization",
                "sim_wall_s", "events_per_s", "skipped", "drift"):
        assert key in s
    rows = list(csv.DictReader(open(tmp_path / "jobs.csv")))
    assert [r["jobid"] for r in rows][:3] == ["1", "2", "3"] and rows[2]["start"] == "100"
    assert rows[2]["hosts"] == "h001:2 h002:2"
    assert json.loads((tmp_path / "summary.json").read_text())["jobs_simulated"] == 8
    assert not list(tmp_path.glob("*.png"))


def test_plots(tmp_path):
    res = CliRunner().invoke(_app(), ["sim", "run", "--workload", str(DATA / "hand.swf"), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["utilization_queue.png", "wait_by_queue.png",
                                                             "wait_hist.png"]
    assert "never started 1" in res.stdout


def test_standalone_module_and_cluster_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(DATA / "hand.swf"),
                          "--cluster", str(ROOT / "examples" / "sim" / "cluster.toml"), "--queues-from-trace", "--json",
                          "--max-jobs", "5"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["hosts"] == 128 and s["slots"] == 152 and s["jobs_simulated"] == 5


def test_usage_errors():
    res = CliRunner().invoke(_app(), ["sim", "run", "--workload", str(DATA / "hand.swf"), "--hosts", "2",
                                      "--cluster", "x.toml"])
    assert res.exit_code == 2 and "not both" in res.output
    res = CliRunner().invoke(_app(), ["sim", "run", "--workload", str(DATA / "hand.swf"), "--picker", "nope"])
    assert res.exit_code == 2 and "unknown picker 'nope'" in res.output
