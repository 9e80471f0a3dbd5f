"""How a finished job becomes accounting records, and how ``xce drift`` prints a report."""

import json

from xce.accounting.drift import UsageRecord, drift_report
from xce.cli import drift as drift_cli
from xce.controller.records import accounting

M = 1024**2
NAMES = {"memory_rss": "mem"}


def job(**kw):
    base = {"id": 7, "job_type": "etl", "queue": "normal", "user": "ann", "tasks": 1, "state": "DONE",
            "exit_code": 0, "exit_signal": None, "start_time": 1_000, "end_time": 5_000, "request": "",
            "sched_request": "", "requests": None, "usage": None}
    return base | kw


def test_only_capacities_are_reported():
    assert accounting.is_capacity("mem") and accounting.is_capacity("example.com/gpu")
    assert not accounting.is_capacity("cpu_ms") and not accounting.is_capacity("memory_rss")
    assert not accounting.is_capacity("a/b")  # no domain before the slash


def test_declared_is_per_task_rusage_times_tasks_over_every_primary():
    assert accounting.declared(job(tasks=4, sched_request="rusage[mem=100M:example.com/gpu=1]")) == \
        {"mem": 400 * M, "example.com/gpu": 4}
    assert accounting.declared(job(sched_request="2*{rusage[mem=1G]} + 3*{rusage[mem=10M]}")) == \
        {"mem": 2 * 1024 * M + 30 * M}
    assert accounting.declared(job()) == {}


def test_rows_map_worker_names_and_keep_peak_mean_samples():
    usage = {"peak": {"memory_rss": 60 * M, "cpu_ms": 9000}, "sum": {"memory_rss": 90 * M, "cpu_ms": 12000},
             "count": {"memory_rss": 2, "cpu_ms": 2}, "samples": 2, "mean": {}}
    rows = {r["resource"]: r for r in accounting.rows(job(sched_request="rusage[mem=500M]", usage=json.dumps(usage)),
                                                       NAMES)}
    assert set(rows) == {"mem", "cpu_ms", "xce.io/cpu-milli"}  # CPU is measured declared or not
    assert (rows["mem"]["declared"], rows["mem"]["peak"], rows["mem"]["mean"], rows["mem"]["samples"]) == \
        (500 * M, 60 * M, 45 * M, 2)
    assert rows["mem"]["run_time"] == 4_000 and rows["cpu_ms"]["declared"] == 0


def test_a_job_that_never_started_has_no_record_and_an_unsampled_one_has_no_measurement():
    assert accounting.rows(job(start_time=None, state="EXIT"), NAMES) == []
    (mem,) = accounting.rows(job(sched_request="rusage[mem=1G]"), NAMES)
    assert (mem["resource"], mem["declared"], mem["samples"]) == ("mem", 1024 * M, 0)


def test_cli_table_in_human_units_and_the_runs_still_needed(monkeypatch, capsys):
    rep = drift_report([UsageRecord("etl", "mem", 500 * M, 50 * M)] * 20 + [UsageRecord("leaky", "mem", 0, 100 * M)] * 20
                       + [UsageRecord("cfd", "mem", M, M)] * 3).to_json()
    monkeypatch.setattr(drift_cli, "connect", lambda *a: type("C", (), {"get": None})())
    monkeypatch.setattr(drift_cli, "call", lambda *a, **kw: rep)
    drift_cli.drift(None, 20, 0.5, 1.5, False, None, None, None)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["TYPE", "RESOURCE", "RUNS"]
    assert out[1].split()[:3] == ["leaky", "mem", "20"] and "never declared" in out[1]
    assert "500M" in out[2] and "450M of 500M (90%) wasted per placement" in out[2]
    assert out[3] == "cfd mem: 3 run(s), 20 needed before drift is reported"


def _gpu_job(ticks, declared=2):
    usage = {"samples": len(ticks), "peak": {"gpu_util_milli": max(ticks)} if ticks else {},
             "sum": {"gpu_util_milli": sum(ticks)} if ticks else {},
             "count": {"gpu_util_milli": len(ticks)} if ticks else {}}
    return job(sched_request=f"rusage[xce.io/gpu={declared}]", usage=json.dumps(usage))


def test_gpus_are_the_mean_utilisation_in_whole_gpus_rounded_half_up():
    def gpu(ticks):
        return {r["resource"]: r for r in accounting.rows(_gpu_job(ticks), NAMES)}["xce.io/gpu"]

    assert [(gpu(t)["peak"], gpu(t)["mean"]) for t in ([200, 300], [400, 600], [499], [1400, 1700], [2000])] == \
        [(0, 0), (1, 1), (0, 0), (2, 2), (2, 2)]
    assert (gpu([100, 0, 50])["declared"], gpu([100, 0, 50])["samples"]) == (2, 3)
    # No tick carried the figure: unmeasured (0 samples), not idle.
    assert (gpu([])["peak"], gpu([])["samples"]) == (0, 0)
    # Not declared: measured by its counter's name only, never as a GPU reservation.
    undeclared = {r["resource"] for r in accounting.rows(job(usage=_gpu_job([900])["usage"]), NAMES)}
    assert undeclared == {"gpu_util_milli", "mem"}


def test_cpu_burnt_without_a_declaration_is_reported_as_never_declared():
    """job-resources.md's worked example: 63 cores taken by a job that declared none."""
    s = 1_000_000_000
    usage = {"peak": {"memory_rss": M, "cpu_ms": 630000}, "sum": {"memory_rss": M, "cpu_ms": 630000},
             "count": {"memory_rss": 1, "cpu_ms": 1}, "samples": 1, "ts": 11 * s}
    burner = job(job_type="bounds", start_time=s, end_time=11 * s, usage=json.dumps(usage))
    cpu = {r["resource"]: r for r in accounting.rows(burner, NAMES)}["xce.io/cpu-milli"]
    assert (cpu["declared"], cpu["peak"], cpu["samples"]) == (0, 63_000, 1)
    recs = [UsageRecord(r["job_type"], r["resource"], r["declared"], r["peak"])
            for r in accounting.rows(burner, NAMES) if accounting.is_capacity(r["resource"])] * 20
    row = {r.resource: r for r in drift_report(recs).rows}["xce.io/cpu-milli"]
    assert (row.verdict, row.declared, row.measured_median) == ("never-declared", 0, 63_000)
    # A job that used no measurable CPU and declared none is no finding: no row.
    idle = job(start_time=s, end_time=11 * s, usage=json.dumps(usage | {"peak": {"cpu_ms": 0}}))
    assert "xce.io/cpu-milli" not in {r.resource for r in drift_report(
        [UsageRecord("etl", r["resource"], r["declared"], r["peak"]) for r in accounting.rows(idle, NAMES)] * 20).rows}


def test_the_kernels_memory_mark_is_the_memory_peak_and_cpu_splits_have_no_record():
    """Samples miss a short spike that the control group's ``mem_peak`` kept; user and system CPU
    time are in the job's usage, not records of their own."""
    usage = {"peak": {"memory_rss": 60 * M, "mem_peak": 200 * M, "cpu_ms": 950, "cpu_user_ms": 900,
                      "cpu_sys_ms": 50},
             "sum": {"memory_rss": 90 * M, "mem_peak": 200 * M, "cpu_ms": 950, "cpu_user_ms": 900, "cpu_sys_ms": 50},
             "count": {"memory_rss": 2, "mem_peak": 1, "cpu_ms": 1, "cpu_user_ms": 1, "cpu_sys_ms": 1},
             "samples": 2, "ts": 2_000_000_000}
    rows = {r["resource"]: r for r in accounting.rows(job(start_time=1_000_000_000, end_time=2_000_000_000,
                                                          usage=json.dumps(usage)), NAMES)}
    assert set(rows) == {"mem", "cpu_ms", "xce.io/cpu-milli"}
    assert (rows["mem"]["peak"], rows["mem"]["mean"], rows["mem"]["samples"]) == (200 * M, 45 * M, 2)
    # 950 ms of CPU in the second it ran: 950 thousandths of a CPU, not 0 (whole seconds cut it to 0).
    assert (rows["cpu_ms"]["peak"], rows["xce.io/cpu-milli"]["peak"]) == (950, 950)
    # A job whose only figure is the mark its last report carried (it ended before a tick) is measured.
    only = {"peak": {"mem_peak": 30 * M, "cpu_ms": 10}, "sum": {"mem_peak": 30 * M, "cpu_ms": 10},
            "count": {"mem_peak": 1, "cpu_ms": 1}, "samples": 1}
    mem = {r["resource"]: r for r in accounting.rows(job(usage=json.dumps(only)), NAMES)}["mem"]
    assert (mem["peak"], mem["mean"], mem["samples"]) == (30 * M, 30 * M, 1)
