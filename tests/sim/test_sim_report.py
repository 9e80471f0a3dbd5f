from pathlib import Path

from xce.sim import read_swf
from xce.sim.report import drift_report, drift_rows, drift_text, percentile

LANL = Path(__file__).resolve().parents[2] / "examples" / "traces" / "LANL-CM5-1994-4.1-cln.first155.swf"


def _recs(jtype, declared, measured, n):
    return [{"job_type": jtype, "resource": "mem", "declared": declared, "measured": measured}] * n


def test_drift_verdicts():
    recs = (_recs("a", 100, 10, 20) + _recs("b", 100, 200, 20) + _recs("c", 0, 50, 20)
            + _recs("d", 100, 90, 20) + _recs("e", 100, 10, 3))
    rows = {r["job_type"]: r for r in drift_rows(recs, 20)}
    assert rows["a"]["verdict"] == "reserves what it never uses" and rows["a"]["wasted_per_task"] == 90
    assert rows["b"]["verdict"] == "oversubscribes" and rows["b"]["ratio"] == 2.0
    assert rows["c"]["verdict"] == "never declared" and rows["c"]["ratio"] is None
    assert rows["d"]["verdict"] == "ok"
    assert rows["e"] == {"job_type": "e", "resource": "mem", "runs": 3, "verdict": "too few runs",
                         "needed": 20, "note": "3 run(s), 20 needed for a verdict"}
    assert "declared" not in rows["e"]


def test_drift_statistics():
    recs = [{"job_type": "x", "resource": "mem", "declared": 10, "measured": m} for m in range(1, 21)]
    (row,) = drift_rows(recs, 20)
    assert (row["measured_median"], row["measured_p95"], row["measured_max"]) == (10.5, 19, 20)
    assert percentile([], 95) == 0.0


def test_lanl_drift_table_present():
    drift = drift_report(read_swf(LANL), 20)
    assert drift["records"] > 100
    types = {r["job_type"]: r for r in drift["rows"]}
    assert types["3"]["runs"] >= 20 and types["3"]["verdict"] in ("ok", "reserves what it never uses", "oversubscribes")
    assert any(r["verdict"] == "too few runs" for r in drift["rows"])
    text = drift_text(drift)
    assert "Memory drift" in text and "20 needed for a verdict" in text


def test_no_memory_fields_says_so():
    drift = drift_report(read_swf(Path(__file__).parent / "data" / "hand.swf", skip_malformed=True))
    assert drift["rows"] == [] and "no used memory" in drift["note"]
