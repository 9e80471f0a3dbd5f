import csv
import json
import subprocess
import sys
from pathlib import Path

from xce.cli.main import XCE
from xce.cli.sim_cmd import parse_window
from xce.testing.cli import invoke

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    return invoke(XCE, ["sim", "run", *map(str, args)])


def test_json_summary_and_files(tmp_path):
    res = _run("--workload", DATA / "hand.swf", "--hosts", "2", "--slots-per-host", "2", "--json", "--out",
               tmp_path, "--skip-malformed")
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["job_lines"] == 11 and s["jobs_simulated"] == 8 and s["skipped_total"] == 3 and s["malformed"] == 2
    # Job 9 asks for 5 processors of a 4-slot cluster: reported as too large, not left pending.
    assert s["jobs_too_large"] == 1 and s["too_large_sample"] == [{"jobid": 9, "procs": 5}]
    assert s["jobs_never_started"] == 0
    assert s["peak_queue_length"] >= 2 and s["makespan_s"] == 210
    for key in ("wait_mean_s", "wait_median_s", "wait_p95_s", "bounded_slowdown_mean", "utilization",
                "sim_wall_s", "events_per_s", "skipped", "drift"):
        assert key in s
    rows = list(csv.DictReader(open(tmp_path / "jobs.csv")))
    assert [r["jobid"] for r in rows][:3] == ["1", "2", "3"] and rows[2]["start"] == "100"
    assert rows[2]["hosts"] == "h[001-002]:2"  # host ranges, as Slurm writes node lists
    assert json.loads((tmp_path / "summary.json").read_text())["jobs_simulated"] == 8
    assert not list(tmp_path.glob("*.png")), "plots are drawn only with --plots"
    assert "2 malformed line(s) skipped, the first at" in res.stderr and "hand.swf:10" in res.stderr


def test_plots_png_and_svg_with_titles(tmp_path):
    res = _run("--workload", DATA / "hand.swf", "--out", tmp_path, "--plots", "--skip-malformed",
               "--queues-from-trace")
    assert res.exit_code == 0, res.output
    stems = {"utilization", "queue", "wait_cdf", "bsld_by_size", "bsld_by_runtime", "gantt", "wait_by_queue"}
    assert {p.name for p in tmp_path.glob("*.png")} == {f"{s}.png" for s in stems}
    assert {p.name for p in tmp_path.glob("*.svg")} == {f"{s}.svg" for s in stems}
    # Every title names trace, cluster and picker (SVG text is drawn as paths, so read the summary's plots
    # list and the subtitle the module builds).
    from xce.sim import read_swf, simulate, uniform_cluster
    from xce.sim.plots import describe

    r = simulate(read_swf(DATA / "hand.swf", skip_malformed=True), uniform_cluster(2, 2))
    assert describe(r) == "hand.swf on 2 hosts x 2 slot(s), picker builtin_fcfs"
    assert len(json.loads((tmp_path / "summary.json").read_text())["plots"]) == 14


def test_plots_need_a_directory():
    res = _run("--workload", DATA / "hand.swf", "--plots", "--skip-malformed")
    assert res.exit_code == 2 and "--out DIR" in res.output


def test_standalone_module_and_cluster_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", "--workload", str(DATA / "hand.swf"),
                          "--cluster", str(ROOT / "examples" / "sim" / "cluster.toml"), "--queues-from-trace", "--json",
                          "--max-jobs", "5", "--skip-malformed"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["hosts"] == 128 and s["slots"] == 152 and s["jobs_simulated"] == 5


def test_usage_errors():
    res = _run("--workload", DATA / "hand.swf", "--hosts", "2", "--cluster", "x.toml")
    assert res.exit_code == 2 and "not both" in res.output
    res = _run("--workload", DATA / "hand.swf", "--picker", "nope", "--skip-malformed")
    assert res.exit_code == 2 and "unknown picker 'nope'" in res.output
    res = _run("--workload", DATA / "hand.swf", "--csv-layout", "slurm", "--skip-malformed")
    assert res.exit_code == 2 and "expected one of xce, batsim" in res.output
    res = _run("--workload", DATA / "hand.swf", "--gantt-window", "5d:1d", "--skip-malformed")
    assert res.exit_code == 2 and "ends before it starts" in res.output


def test_gantt_window_grammar():
    assert parse_window("30d:31d") == (30 * 86400, 31 * 86400)
    assert parse_window("90m:3h") == (5400, 10800)
    assert parse_window("0:100") == (0, 100)


def test_batsim_layout_reads_back(tmp_path):
    """Batsim's _jobs.csv columns; allocated_resources as interval sets of slot ids, never overlapping."""
    res = _run("--workload", DATA / "hand.swf", "--hosts", "2", "--slots-per-host", "2", "--out", tmp_path,
               "--csv-layout", "batsim", "--skip-malformed")
    assert res.exit_code == 0, res.output
    with open(tmp_path / "jobs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
                             "requested_time", "success", "final_state", "starting_time", "execution_time",
                             "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
                             "consumed_energy", "metadata"]
    by_id = {r["job_id"]: r for r in rows}
    assert set(by_id) == {"1", "2", "3", "4", "5", "6", "8"}  # 9 never ran: too large for 4 slots
    assert by_id["3"]["allocated_resources"] == "0-3" and by_id["3"]["starting_time"] == "100"
    assert by_id["1"]["allocated_resources"] == "0-1" and by_id["2"]["allocated_resources"] == "2"
    assert float(by_id["3"]["stretch"]) == 1.9  # turnaround 190 / execution 100
    busy: list[tuple[int, int, set]] = []
    for r in rows:
        ids = set()
        for part in r["allocated_resources"].split():
            a, _, b = part.partition("-")
            ids |= set(range(int(a), int(b or a) + 1))
        assert len(ids) == int(r["requested_number_of_resources"])
        busy.append((int(r["starting_time"]), int(r["finish_time"]), ids))
    for k, (s1, e1, ids1) in enumerate(busy):
        for s2, e2, ids2 in busy[k + 1:]:
            if s1 < e2 and s2 < e1:
                assert not ids1 & ids2, "two jobs on one slot at once"


def test_a_plain_run_imports_neither_matplotlib_nor_the_config_loader():
    """Fast start: plotting and configuration validation cost ~0.7 s of imports; a run that needs neither skips them."""
    code = ("import sys\nfrom xce.cli.main import XCE\n"
            "code = XCE.run(['sim', 'run', '--workload', sys.argv[1], '--max-jobs', '50', '--json'])\n"
            "assert code == 0, code\n"
            "print(sorted(m for m in ('matplotlib', 'xce.config.loader', 'xce.config.schema', 'rich.progress') if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "traces" / "NASA-iPSC-1993-3.1-cln.swf")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "[]"
    assert json.loads(out.stdout)["jobs_simulated"] == 50
