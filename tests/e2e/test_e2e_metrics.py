"""``/metrics`` after a small workload on a live cluster, read with prometheus-client's own parser:
every family an operator alerts on is there with values that match what happened."""

from __future__ import annotations

import httpx
import pytest
from conftest import wait_for
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.integration


def scrape(cluster) -> dict[str, object]:
    r = httpx.get(cluster.url + "/metrics", headers={"Authorization": f"Bearer {cluster.token('metrics')}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(r.text)}


def value(families, name: str, **labels: str) -> float:
    """One sample's value; a counter is named by its family (``xce_x`` for ``xce_x_total``)."""
    family = families[name]
    sample = name + "_total" if family.type == "counter" else name
    found = [s.value for s in family.samples if s.name == sample and s.labels == labels]
    assert len(found) == 1, (name, labels, families[name].samples)
    return found[0]


def histogram(families, name: str, **labels: str) -> tuple[float, float, list[tuple[float, float]]]:
    """(count, sum, [(upper bound, cumulative count)]) of one histogram series."""
    fam = families[name]
    assert fam.type == "histogram", (name, fam.type)
    mine = [s for s in fam.samples if {k: v for k, v in s.labels.items() if k != "le"} == labels]
    count = [s.value for s in mine if s.name == name + "_count"][0]
    total = [s.value for s in mine if s.name == name + "_sum"][0]
    buckets = sorted((float(s.labels["le"]), s.value) for s in mine if s.name == name + "_bucket")
    assert [c for _, c in buckets] == sorted(c for _, c in buckets) and buckets[-1] == (float("inf"), count)
    return count, total, buckets


def test_metrics_after_a_small_workload(make_cluster):
    cluster, xce = make_cluster(workers=2, slots=2)
    quick = [xce.submit("--", "sh", "-c", "sleep 0.3") for _ in range(4)]
    failing = xce.submit("--", "sh", "-c", "exit 3")
    waiting = xce.submit("-R", "select[maxmem > 4000000G]", "--", "true")
    for jobid in quick:
        xce.wait_state(jobid, "DONE", 60)
    xce.wait_state(failing, "EXIT", 60)
    wait_for(lambda: xce.job(waiting).get("pend_reasons"), 30, "the waiting job's pend reasons")
    long = xce.submit("--", "sleep", "60")
    running = xce.wait_state(long, "RUN", 30)
    # round figures without decisions ride along at most once a second: wait for those too
    fam = wait_for(lambda: (f := scrape(cluster)) and histogram(f, "xce_sched_round_seconds")[0] >= 3 and f,
                   30, "round figures to reach the controller")

    assert value(fam, "xce_jobs", state="DONE", queue="normal") == 4
    assert value(fam, "xce_jobs", state="EXIT", queue="normal") == 1
    assert value(fam, "xce_jobs", state="PEND", queue="normal") == 1
    assert value(fam, "xce_jobs", state="RUN", queue="normal") == 1
    assert value(fam, "xce_jobs_pending_by_reason", category="select") == 1

    host = running["placement"][0]["host"]
    for name in cluster.worker_names:
        assert value(fam, "xce_host_slots", host=name) == 2
        assert value(fam, "xce_host_slots_used", host=name) == (1 if name == host else 0)
        assert 0 <= value(fam, "xce_worker_report_age_seconds", host=name) < 10  # reports every 0.5 s

    count, total, _ = histogram(fam, "xce_sched_round_seconds")
    assert count >= 3 and 0 < total < count * 5
    count, total, buckets = histogram(fam, "xce_sched_round_decisions")
    assert total >= 6  # at least the six dispatches, and the waiting job's PEND
    assert dict(buckets)[0.0] < count  # some rounds decided something, and not all of them did
    count, total, buckets = histogram(fam, "xce_job_wait_seconds", queue="normal")
    assert count == 6 and 0 <= total < 6 * 30  # six dispatches, each within seconds of its submission
    assert dict(buckets)[60.0] == count
    count, total, _ = histogram(fam, "xce_db_commit_seconds")
    assert count > 20 and total / count < 0.5  # every submission, decision and report committed

    assert value(fam, "xce_scheduler_up") == 1
    assert 0 <= value(fam, "xce_scheduler_last_request_seconds") < 5  # it long-polls the feed about once a second
    assert value(fam, "xce_controller_leader") == 1
    assert 0 <= value(fam, "xce_event_log_lag") < 1000
    assert 0 <= value(fam, "xce_event_feed_lag_seconds") < 30
    assert value(fam, "xce_workers", status="ok") == 2
    assert value(fam, "xce_jobs_submitted", queue="normal") == 7


def test_the_grafana_dashboard_and_alerts_use_only_served_metrics(make_cluster):
    import json
    import re
    from pathlib import Path

    cluster, xce = make_cluster(workers=1, slots=1)
    xce.wait_state(xce.submit("--", "true"), "DONE", 60)
    served = set(scrape(cluster))
    examples = Path(__file__).resolve().parents[2] / "examples" / "grafana"
    dashboard = json.loads((examples / "xce-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs.append((examples / "xce-alerts.yml").read_text())
    used = {re.sub(r"_(bucket|count|sum|total)$", "", m) for e in exprs for m in re.findall(r"\bxce_[a-z_]+", e)}
    assert len(used) >= 15 and used <= served, sorted(used - served)
