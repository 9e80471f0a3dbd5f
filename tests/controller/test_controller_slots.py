"""The in-memory tallies the dashboard and /metrics read: slots held per host, kept as jobs move,
must always equal what the store says (SQLite and PostgreSQL); and a job's usage series stays
bounded and spread over its whole run."""

from __future__ import annotations

import uuid

from test_controller_store import open_controller, submit

from xce.controller.auth.tokens import Principal
from xce.controller.hosts import fleet
from xce.controller.hosts.slots import SlotTally
from xce.controller.jobs import control
from xce.controller.records import usage_series
from xce.controller.sched import decisions
from xce.controller.web.models import DecisionEnvelope, JobStatusReport, RegisterRequest


def decide(ctl, *ds: dict) -> list[dict]:
    return decisions.apply(ctl, [DecisionEnvelope(id=uuid.uuid4().hex, ts=1, decision=d) for d in ds])


def from_store(ctl) -> dict[str, tuple[int, int]]:
    fresh = SlotTally()
    with ctl.tx() as conn:
        fresh.reload(conn)
    return fresh.by_host()


def test_slots_held_follow_every_move_and_match_the_store(tmp_path, db_url):
    ctl = open_controller(tmp_path, db_url)
    try:
        for h in ("h1", "h2"):
            fleet.register(ctl, RegisterRequest(name=h, resources={"slots": 8}, load={}))
        a, b, c = (submit(ctl)["jobid"] for _ in range(3))
        decide(ctl, {"op": "DISPATCH", "seq": 1, "jobid": a, "placement": [["h1", 2], ["h2", 3]]},
               {"op": "DISPATCH", "seq": 2, "jobid": b, "placement": [["h2", 1]]},
               {"op": "DISPATCH", "seq": 3, "jobid": c, "placement": [["h1", 4]]})
        assert ctl.slots.by_host() == from_store(ctl) == {"h1": (6, 2), "h2": (4, 2)}
        assert ctl.slots.jobs_on("h2") == [a, b]
        decide(ctl, {"op": "PREEMPT", "seq": 4, "preempting_jobid": 99, "victim_jobids": [c], "signal": "SIGSTOP"})
        assert ctl.slots.by_host() == from_store(ctl) == {"h1": (6, 2), "h2": (4, 2)}  # suspended still holds
        control.kill(ctl, Principal("admin", "admin"), c)
        fleet.job_status(ctl, "h2", b, JobStatusReport(status="finished", exit_code=0))
        assert ctl.slots.by_host() == from_store(ctl) == {"h1": (2, 1), "h2": (3, 1)}
        control.kill(ctl, Principal("admin", "admin"), a)
        assert ctl.slots.by_host() == from_store(ctl) == {}
    finally:
        ctl.close()


def test_slots_survive_a_restart_and_a_rolled_back_transaction(tmp_path):
    ctl = open_controller(tmp_path, None)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 8}, load={}))
        a = submit(ctl)["jobid"]
        decide(ctl, {"op": "DISPATCH", "seq": 1, "jobid": a, "placement": [["h1", 3]]})
        job = ctl.job(a)
        try:
            with ctl.tx():
                ctl.move(job, "kill", "killed", "admin")
                raise RuntimeError("the transaction fails after the move")
        except RuntimeError:
            pass
        assert ctl.slots.by_host() == {"h1": (3, 1)}  # rebuilt from the store: the kill never happened
    finally:
        ctl.close()
    ctl = open_controller(tmp_path, None)
    try:
        assert ctl.slots.by_host() == {"h1": (3, 1)}
    finally:
        ctl.close()


def test_usage_series_stays_bounded_and_spans_the_whole_run():
    series = None
    for i in range(10_000):
        series = usage_series.append(series, {"memory_rss": i, "cpu_ms": i * 100, "cpu_user_ms": i * 90,
                                              "cpu_sys_ms": i * 10, "mem_peak": i}, 10**9 * (1000 + i))
    points = series["points"]
    assert len(points) < usage_series.MAX_POINTS
    # Only what the job page charts: the totals' split and the kernel's mark are in the job's figures.
    assert points[0] == [0.0, {"cpu_ms": 0, "memory_rss": 0}]
    assert points[-1][0] > 9000  # the end of the run is there, not only its start
    gaps = {round(b[0] - a[0], 1) for a, b in zip(points, points[1:])}
    assert len(gaps) == 1  # evenly spread
    assert [p[1]["memory_rss"] for p in points] == sorted(p[1]["memory_rss"] for p in points)


def test_a_short_job_keeps_every_sample():
    series = None
    for i in range(5):
        series = usage_series.append(series, {"memory_rss": 100 * i}, 10**9 * i // 2)
    assert [p[0] for p in series["points"]] == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_cpu_chart_takes_the_rate_over_a_window_not_between_two_ticks():
    from xce.controller.ui.charts import usage_lines

    series = None
    for i in range(41):  # a job using one core, reported every 0.5 s (give or take a little)
        series = usage_series.append(series, {"cpu_ms": i * 500 + (37 if i % 3 else 0), "memory_rss": 1 << 20},
                                     10**9 * i // 2)
    cpu = usage_lines(series)["cpu"]
    assert cpu[-1][0] == 20.0
    assert all(0.8 <= rate <= 1.25 for t, rate in cpu if t >= 5), cpu
