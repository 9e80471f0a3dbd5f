"""The drift report on synthetic accounting records: each verdict, the sample threshold, undeclared."""

from xce.accounting.drift import FAR_ABOVE, FAR_BELOW, OK, UNDECLARED, Thresholds, UsageRecord, drift_report

M = 1024**2


def runs(job_type, declared, measured_values, resource="mem"):
    return [UsageRecord(job_type, resource, declared, m) for m in measured_values]


def test_far_below_says_how_much_is_wasted_per_placement():
    rep = drift_report(runs("etl", 500 * M, [50 * M] * 20))
    (row,) = rep.rows
    assert (row.verdict, row.runs, row.declared, row.measured_median, row.ratio) == (FAR_BELOW, 20, 500 * M, 50 * M, 0.1)
    assert row.wasted_per_placement == 450 * M
    assert "450" in row.text or str(450 * M) in row.text
    assert "90%" in row.text


def test_far_above_is_oversubscription():
    rep = drift_report(runs("cfd", 1 * M, [4 * M] * 25))
    assert rep.rows[0].verdict == FAR_ABOVE
    assert rep.rows[0].ratio == 4.0


def test_measured_but_never_declared_is_reported_with_zero_and_ranked_worst():
    rep = drift_report(runs("etl", 500 * M, [50 * M] * 20) + runs("leaky", 0, [100 * M] * 20)
                       + runs("cfd", 1 * M, [4 * M] * 20))
    assert [r.verdict for r in rep.rows] == [UNDECLARED, FAR_ABOVE, FAR_BELOW]
    undeclared = rep.rows[0]
    assert (undeclared.job_type, undeclared.declared, undeclared.ratio) == ("leaky", 0, None)


def test_within_thresholds_is_ok_and_thresholds_are_settable():
    rows = runs("web", 100, [90] * 20)
    assert drift_report(rows).rows[0].verdict == OK
    assert drift_report(rows, thresholds=Thresholds(low=0.95, high=2)).rows[0].verdict == FAR_BELOW


def test_nothing_below_min_samples_but_the_count_is_said():
    rep = drift_report(runs("etl", 500, [50] * 19))
    assert rep.rows == []
    (ins,) = rep.insufficient
    assert (ins.runs, ins.needed) == (19, 20)
    assert "19 run(s), 20 needed" in ins.text
    assert drift_report(runs("etl", 500, [50] * 19), min_samples=5).rows[0].verdict == FAR_BELOW


def test_percentiles_and_type_filter():
    values = list(range(1, 101))
    rep = drift_report(runs("a", 50, values) + runs("b", 50, [50] * 30), job_type="a")
    (row,) = rep.rows
    assert (row.measured_median, row.measured_p95, row.measured_max) == (50, 95, 100)
