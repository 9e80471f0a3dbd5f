"""Who may read ``/metrics`` (token, scrape-only token, public), the round figures the scheduler
sends, and pending jobs by reason category; against real controller processes."""

from __future__ import annotations

import stat
import uuid

import httpx
import pytest
from controller_harness import write_config
from prometheus_client.parser import text_string_to_metric_families
from test_controller_protocol import Cluster, dispatch

from xce.client import statedir
from xce.client.launch import start_controller

pytestmark = pytest.mark.integration


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_the_scrape_token_reads_metrics_and_nothing_else(controller):
    path = statedir.token_path(controller.state_dir, "metrics")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    scrape = {"Authorization": f"Bearer {controller.token('metrics')}"}
    assert httpx.get(controller.url + "/metrics").status_code == 401  # not public by default
    assert httpx.get(controller.url + "/metrics", headers=scrape).status_code == 200
    for method, path in (("GET", "/v1/jobs"), ("POST", "/v1/jobs"), ("GET", "/v1/hosts"), ("GET", "/v1/sched/events"),
                         ("GET", "/v1/workers/h1/actions"), ("POST", "/v1/admin/users")):
        r = httpx.request(method, controller.url + path, headers=scrape, json={})
        assert r.status_code == 403 and "a metrics token cannot call this endpoint" in r.json()["detail"], path


def test_public_metrics_need_no_token_and_follow_reconfig(tmp_path):
    cfg = write_config(tmp_path, "[metrics]\npublic = true\n")
    ctl = start_controller(tmp_path / "state", config=str(cfg))
    try:
        r = httpx.get(ctl.url + "/metrics")
        assert r.status_code == 200 and "xce_jobs_pending_by_reason" in r.text
        # a token that is sent is still checked
        assert httpx.get(ctl.url + "/metrics", headers={"Authorization": "Bearer forged"}).status_code == 401
        cfg.write_text("[metrics]\npublic = false\n")
        admin = {"Authorization": f"Bearer {ctl.token('admin')}"}
        assert httpx.post(ctl.url + "/v1/admin/reconfig", headers=admin).json()["changed"] is True
        assert httpx.get(ctl.url + "/metrics").status_code == 401
    finally:
        ctl.stop()


def test_round_figures_feed_the_histograms_and_bad_ones_are_refused(api):
    sched = api("scheduler")
    before = samples(api("admin").get("/metrics").text)
    rounds = [{"ts": 1, "duration_s": 0.004, "decisions": 3}, {"ts": 2, "duration_s": 0.3, "decisions": 0}]
    assert sched.post("/v1/sched/decisions", json={"decisions": [], "rounds": rounds}).status_code == 200
    after = samples(api("admin").get("/metrics").text)

    def grew(name: str) -> float:
        return after[(name, ())] - before.get((name, ()), 0)

    assert grew("xce_sched_round_seconds_count") == 2 and grew("xce_sched_round_decisions_sum") == 3
    assert grew("xce_sched_round_seconds_sum") == pytest.approx(0.304)
    assert after[("xce_sched_round_decisions_bucket", (("le", "0.0"),))] - \
        before.get(("xce_sched_round_decisions_bucket", (("le", "0.0"),)), 0) == 1
    for bad in ({"ts": 1, "duration_s": -1, "decisions": 0}, {"ts": 1, "duration_s": "fast", "decisions": 0},
                {"ts": 1, "duration_s": 0.1}):
        r = sched.post("/v1/sched/decisions", json={"decisions": [], "rounds": [bad]})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][:3] == ["body", "rounds", 0]
    assert samples(api("admin").get("/metrics").text)[("xce_sched_round_seconds_count", ())] == \
        after[("xce_sched_round_seconds_count", ())]


def test_the_scheduler_counts_as_up_once_it_reads_the_feed(tmp_path):
    ctl = start_controller(tmp_path / "state")
    try:
        admin = {"Authorization": f"Bearer {ctl.token('admin')}"}
        text = httpx.get(ctl.url + "/metrics", headers=admin).text
        assert samples(text)[("xce_scheduler_up", ())] == 0
        assert "xce_scheduler_last_request_seconds" not in text  # never heard from
        sched = {"Authorization": f"Bearer {ctl.token('scheduler')}"}
        assert httpx.get(ctl.url + "/v1/sched/state", headers=sched).status_code == 200
        now = samples(httpx.get(ctl.url + "/metrics", headers=admin).text)
        assert now[("xce_scheduler_up", ())] == 1 and now[("xce_scheduler_last_request_seconds", ())] < 5
    finally:
        ctl.stop()


def test_pending_jobs_are_counted_by_the_step_of_their_first_reason(api):
    host = f"hcat{uuid.uuid4().hex[:6]}"
    cl = Cluster(api, host, slots=2)
    a, b = cl.submit(), cl.submit()

    def by_reason() -> dict[str, float]:
        return {dict(k[1])["category"]: v for k, v in samples(api("admin").get("/metrics").text).items()
                if k[0] == "xce_jobs_pending_by_reason"}

    start = by_reason()
    reason = {"step": "slots", "text": "needs slots 4, short by slots 2", "resource": "slots", "needed": 4, "short": 2}
    cl.decide({"op": "PEND", "seq": 2, "jobid": a, "reasons": [reason]},
              {"op": "PEND", "seq": 3, "jobid": b, "reasons": [reason | {"step": "select", "resource": ""}]})
    now = by_reason()
    assert now.get("slots", 0) - start.get("slots", 0) == 1 and now.get("select", 0) - start.get("select", 0) == 1
    assert now.get("unscheduled", 0) - start.get("unscheduled", 0) == -2
    cl.decide(dispatch(a, (host, 1)))
    assert by_reason().get("slots", 0) == start.get("slots", 0)  # a dispatched job waits for nothing
    api("admin").post(f"/v1/jobs/{b}/kill")
    assert by_reason().get("select", 0) == start.get("select", 0)
