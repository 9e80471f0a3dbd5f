"""Runs killed at their memory limit in the drift report: their peak is the limit, not their need,
so the type is reported as hitting it, ahead of any ratio and however few its runs."""

from __future__ import annotations

from xce.accounting.drift import HIT_LIMIT, OK, UsageRecord, drift_report

G = 1 << 30


def test_a_type_whose_runs_hit_their_limit_is_reported_so_however_few():
    recs = [UsageRecord("align", "mem", 2 * G, 2 * G, hit_limit=True),
            *(UsageRecord("align", "mem", 2 * G, 2 * G) for _ in range(2)),
            *(UsageRecord("etl", "mem", 2 * G, int(1.9 * G)) for _ in range(3))]
    rep = drift_report(recs, min_samples=20)
    assert [(r.job_type, r.verdict, r.limit_hits) for r in rep.rows] == [("align", HIT_LIMIT, 1)]
    assert rep.rows[0].text == "1 of 3 run(s) killed at its memory limit (MEMLIMIT): it needs more than it declared"
    assert [(i.job_type, i.runs) for i in rep.insufficient] == [("etl", 3)]
    rep = drift_report(recs, min_samples=3)
    assert [(r.job_type, r.verdict) for r in rep.rows] == [("align", HIT_LIMIT), ("etl", OK)]
