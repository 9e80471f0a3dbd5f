"""``xce whatif`` on a live cluster's own history: a mixed workload of a few hundred short jobs (two
users, two queues, some wide jobs) really runs, then the baseline simulation of that window must put
at least 90% of the jobs' starts within a minute of reality, and the alternative is simulated beside it."""

from __future__ import annotations

import json
import random
import time

import httpx
import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONFIG = """
default_queue = "normal"

[queues.normal]
priority = 30

[queues.short]
priority = 50
"""
JOBS = 240


def test_whatif_baseline_agrees_with_reality(make_cluster, tmp_path):
    config = tmp_path / "xce.toml"
    config.write_text(CONFIG)
    cluster, xce = make_cluster(workers=3, slots=4, config=config)
    clients = [httpx.Client(base_url=cluster.url, timeout=30,
                            headers={"Authorization": f"Bearer {tok}"})
               for tok in ((cluster.state_dir / "token").read_text().strip(), cluster.token("admin"))]
    rng = random.Random(25)
    ids = []
    try:
        # Bursts of submissions, so that jobs queue, the two queues compete and wide jobs wait for room.
        for _burst in range(6):
            for _ in range(JOBS // 6):
                wide = rng.random() < 0.08
                body = {"command": ["sleep", str(rng.choice((0.2, 0.5, 1, 1.5, 2)))],
                        "queue": rng.choice(("normal", "normal", "short")),
                        "tasks": 6 if wide else rng.choice((1, 1, 1, 2)),
                        "job_type": "wide" if wide else "serial"}
                r = clients[rng.randrange(2)].post("/v1/jobs", json=body)
                assert r.status_code == 201, r.text
                ids.append(r.json()["jobid"])
            time.sleep(4)

        def all_done():
            r = clients[1].get("/v1/jobs", params={"user": "all", "all": "true", "limit": 1000})
            jobs = [j for j in r.json()["jobs"] if j["jobid"] in set(ids)]
            return len(jobs) == len(ids) and all(j["state"] in ("DONE", "EXIT") for j in jobs) and jobs

        jobs = wait_for(all_done, 600, "every job to finish", interval=1.0)
    finally:
        for c in clients:
            c.close()
    assert all(j["state"] == "DONE" for j in jobs)
    assert len({j["user"] for j in jobs}) == 2 and len({j["queue"] for j in jobs}) == 2
    assert any(len(j["placement"]) > 1 for j in jobs)  # some wide jobs spanned hosts

    swf = tmp_path / "hour.swf"
    xce("workload", "export", "--since", "1h", "-o", str(swf))
    r = xce("sim", "run", "--workload", str(swf), "--json")
    assert json.loads(r.stdout)["malformed"] == 0 and json.loads(r.stdout)["jobs_simulated"] == len(ids)

    # The picker once the policies are registered; the one picker every build has until then.
    from xce.core.pickers import registry
    from xce.plugins import load_entry_points

    load_entry_points()
    picker = "easy_backfill" if "easy_backfill" in registry.available() else "builtin_fcfs"
    report = tmp_path / "whatif.html"
    r = xce("whatif", "--since", "1h", "--picker", picker, "--hosts", "+1", "--report", str(report))
    text = r.stdout
    print(text)
    assert "ALL JOBS" in text and "BASELINE" in text and "ALTERNATIVE" in text and "mean wait (s)" in text
    assert "QUEUE" in text and "short" in text and "USER" in text
    assert "Baseline against reality" in text and report.stat().st_size > 10_000
    r = xce("whatif", "--since", "1h", "--picker", picker, "--hosts", "+1", "--json")
    out = json.loads(r.stdout)
    agree = out["agreement"]
    print(json.dumps(agree, indent=1))
    assert agree["jobs"] == len(ids)
    assert agree["share"] >= 0.9, agree
    # One more host can only help: every job still runs, and nobody waits longer on average.
    assert out["alternative_figures"]["all"]["jobs"] == len(ids)
    assert out["alternative_figures"]["all"]["wait_mean_s"] <= out["baseline"]["all"]["wait_mean_s"]
