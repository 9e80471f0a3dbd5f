"""The drift report over HTTP on SQLite and PostgreSQL: accounting records written as jobs end,
driven by the worker protocol (load reports carrying usage ticks, then ``finished``)."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from controller_harness import Api

from xce.client import statedir
from xce.client.launch import start_controller
from xce.controller.store import engine as store_engine
from xce.controller.store.schema import job_accounting

pytestmark = pytest.mark.integration

M = 1024**2
HOST = "hdrift"


class Driver:
    """A scheduler and a worker played by the test."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.user = api("dana")
        self.worker = api("worker")
        self.sched = api("scheduler")
        self.register(running=None)

    def register(self, running):
        body = {"name": HOST, "resources": {"slots": 4096, "maxmem": 1 << 40, "xce.io/gpu": 8192},
                "load": {"mem": 1 << 39}}
        if running is not None:
            body["running"] = running
        r = self.worker.post("/v1/workers/register", json=body)
        assert r.status_code == 200, r.text
        return r.json()

    def run(self, n: int, job_type: str, ticks: list[dict], *, tasks: int = 1, finish: bool = True,
            **submit) -> list[int]:
        """``n`` jobs of one type, dispatched, sampled with ``ticks`` (each tick one load report), finished."""
        r = self.user.post("/v1/jobs", json={"command": ["true"], "job_type": job_type, "tasks": tasks,
                                              "array": n, **submit})
        assert r.status_code == 201, r.text
        ids = r.json()["jobids"]
        body = {"decisions": [{"id": uuid.uuid4().hex, "ts": 1, "decision": {
            "op": "DISPATCH", "seq": 1, "jobid": j, "placement": [[HOST, tasks]]}} for j in ids]}
        r = self.sched.post("/v1/sched/decisions", json=body)
        assert r.status_code == 200 and all(x["status"] == "applied" for x in r.json()["results"]), r.text
        for tick in ticks:
            r = self.worker.post(f"/v1/workers/{HOST}/load", json={"load": {}, "usage": {str(j): tick for j in ids}})
            assert r.status_code == 200 and r.json()["kill"] == [], r.text
        if finish:
            for j in ids:
                r = self.worker.post(f"/v1/workers/{HOST}/jobs/{j}/status", json={"status": "finished", "exit_code": 0})
                assert r.status_code == 200 and r.json()["state"] == "DONE", r.text
        return ids

    def drift(self, who: str = "dana", **params) -> dict:
        r = self.api(who).get("/v1/drift", params=params)
        assert r.status_code == 200, r.text
        return r.json()


def _rows(rep: dict) -> dict[tuple[str, str], dict]:
    return {(r["job_type"], r["resource"]): r for r in rep["rows"]}


def _store_rows(sd, db_url) -> list[dict]:
    engine = store_engine.open_engine(store_engine.normalize_url(db_url, statedir.sqlite_path(sd)))
    try:
        with engine.connect() as c:
            return [dict(r) for r in c.execute(sa.select(job_accounting).order_by(job_accounting.c.jobid,
                                                                                   job_accounting.c.resource)).mappings()]
    finally:
        engine.dispose()


def test_drift_verdicts_threshold_and_durability(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        d = Driver(api)
        # Far below: 500 MB declared (requests, folded into rusage), about 50 MB used.
        d.run(20, "etl", [{"memory_rss": 40 * M, "cpu_ms": 1000}, {"memory_rss": 50 * M, "cpu_ms": 2000}],
              requests={"mem": 500 * M})
        # Far above: 2 tasks x 100 MB per task declared in -R, 400 MB used by the job as a whole.
        d.run(20, "cfd", [{"memory_rss": 400 * M}], tasks=2, request="rusage[mem=100M]")
        # Never declared: nothing reserved, 100 MB used.
        d.run(20, "leaky", [{"memory_rss": 100 * M, "cpu_ms": 5000}])
        # Within the thresholds.
        d.run(20, "web", [{"memory_rss": 90 * M}], requests={"mem": 100 * M})
        # Too few runs for a verdict.
        d.run(19, "few", [{"memory_rss": 10 * M}], requests={"mem": 100 * M})
        # Started but never sampled: no measurement, so it must not count as a run using 0.
        d.run(5, "web", [], requests={"mem": 100 * M})

        rep = d.drift()
        rows = _rows(rep)
        # CPU time is measured on every job, so the jobs that burnt some without declaring
        # xce.io/cpu-milli are reported for it too (job-resources.md: measured but never declared).
        assert [(r["job_type"], r["resource"], r["verdict"]) for r in rep["rows"]] == [
            ("etl", "xce.io/cpu-milli", "never-declared"), ("leaky", "mem", "never-declared"),
            ("leaky", "xce.io/cpu-milli", "never-declared"), ("cfd", "mem", "far-above"),
            ("etl", "mem", "far-below"), ("web", "mem", "ok")]
        etl = rows[("etl", "mem")]
        assert (etl["runs"], etl["declared"], etl["measured_median"], etl["measured_max"], etl["ratio"]) == \
            (20, 500 * M, 50 * M, 50 * M, 0.1)
        assert etl["wasted_per_placement"] == 450 * M and "90%" in etl["text"]
        cfd = rows[("cfd", "mem")]
        assert (cfd["declared"], cfd["ratio"], cfd["verdict"]) == (200 * M, 2.0, "far-above")
        leaky = rows[("leaky", "mem")]
        assert (leaky["declared"], leaky["ratio"], leaky["measured_median"]) == (0, None, 100 * M)
        assert rows[("web", "mem")]["runs"] == 20
        # cpu_ms is a counter, not a capacity: it is never reported as "never declared".
        assert not any(r["resource"] == "cpu_ms" for r in rep["rows"] + rep["insufficient"])
        (few,) = rep["insufficient"]
        assert (few["job_type"], few["runs"], few["needed"]) == ("few", 19, 20)
        assert "19 run(s), 20 needed" in few["text"]
        assert rep["query"] == {"jobType": None, "minSamples": 20, "low": 0.5, "high": 1.5}

        # The threshold and the filters are the caller's; any role may read the report.
        rep = d.drift("scheduler", jobType="few", minSamples=19)
        assert [(r["job_type"], r["verdict"]) for r in rep["rows"]] == [("few", "far-below")]
        assert rep["insufficient"] == [] and rep["query"]["jobType"] == "few"
        rep = d.drift("worker", jobType="web", low=0.95, high=2)
        assert rep["rows"][0]["verdict"] == "far-below"
        r = api("dana").get("/v1/drift", params={"low": 2, "high": 1})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "low"]
        assert api("dana").get("/v1/drift", params={"minSamples": 0}).status_code == 422

        # What the store holds for one run: declared, peak, mean, samples, run time, exit status.
        stored = _store_rows(tmp_path, db_url)
        etl_id = min(r["jobid"] for r in stored if r["job_type"] == "etl")
        by_res = {r["resource"]: r for r in stored if r["jobid"] == etl_id}
        assert set(by_res) == {"cpu_ms", "mem", "xce.io/cpu-milli"}
        mem = by_res["mem"]
        assert (mem["declared"], mem["peak"], mem["mean"], mem["samples"]) == (500 * M, 50 * M, 45 * M, 2)
        assert (mem["queue"], mem["user"], mem["state"], mem["exit_code"]) == ("normal", "dana", "DONE", 0)
        assert mem["run_time"] >= 0 and mem["end_time"] >= mem["start_time"]
        assert (by_res["cpu_ms"]["declared"], by_res["cpu_ms"]["peak"]) == (0, 2000)
        before = d.drift()

        ctl.stop()
        ctl = start_controller(tmp_path, db=db_url, extra_args=("--worker-timeout", "600"))
        api.close()
        api = Api(ctl)
        assert Driver(api).drift() == before
    finally:
        api.close()
        ctl.stop()


def test_killed_and_lost_jobs_are_recorded(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        d = Driver(api)
        killed, lost = d.run(2, "batch", [{"memory_rss": 30 * M}], finish=False, requests={"mem": 64 * M})
        never = d.run(1, "batch", [], finish=False)[0]
        assert api("dana").post(f"/v1/jobs/{killed}/kill").status_code == 200
        r = api("dana").post("/v1/jobs", json={"command": ["true"], "job_type": "batch"})
        pending = r.json()["jobid"]
        assert api("dana").post(f"/v1/jobs/{pending}/kill").status_code == 200
        rows = {r["jobid"]: r for r in _store_rows(tmp_path, db_url) if r["resource"] == "mem"}
        assert rows[killed]["state"] == "EXIT" and rows[killed]["peak"] == 30 * M and rows[killed]["exit_code"] is None
        assert pending not in rows  # never started: nothing was measured or reserved on a host

        # The worker's last word on the killed job arrives later, with a final tick and the signal.
        r = api("worker").post(f"/v1/workers/{HOST}/jobs/{killed}/status",
                               json={"status": "finished", "exit_code": 143, "signal": "SIGTERM",
                                     "usage": {"memory_rss": 35 * M}})
        assert r.status_code == 200, r.text

        # Deliver the starts, then the worker comes back without its jobs: they are lost.
        assert api("worker").get(f"/v1/workers/{HOST}/actions", params={"after": 0}).status_code == 200
        assert sorted(d.register(running=[])["lost"]) == sorted([lost, never])
        rows = {r["jobid"]: r for r in _store_rows(tmp_path, db_url) if r["resource"] == "mem"}
        k = rows[killed]
        assert (k["state"], k["exit_code"], k["exit_signal"], k["peak"], k["samples"]) == \
            ("EXIT", 143, "SIGTERM", 35 * M, 2)
        assert (rows[lost]["state"], rows[lost]["declared"], rows[lost]["peak"]) == ("EXIT", 64 * M, 30 * M)
        assert rows[never]["samples"] == 0  # recorded, but the report skips a run never measured
        rep = d.drift(minSamples=1)
        assert _rows(rep)[("batch", "mem")]["runs"] == 2
    finally:
        api.close()
        ctl.stop()


def test_gpus_are_measured_from_nvml_utilisation_in_gpus(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url, extra_args=("--worker-timeout", "600"))
    api = Api(ctl)
    try:
        d = Driver(api)
        # 2 GPUs declared, a quarter of one busy on average (200 and 300 thousandths of a GPU).
        idle = d.run(20, "train", [{"memory_rss": 10 * M, "cpu_ms": 1000, "gpu_util_milli": 200},
                                   {"memory_rss": 12 * M, "gpu_util_milli": 300}], requests={"xce.io/gpu": 2})
        # 1 GPU declared, 0.8 busy: the nearest whole GPU is all of it.
        d.run(20, "render", [{"memory_rss": M, "gpu_util_milli": 900}, {"memory_rss": M, "gpu_util_milli": 700}],
              requests={"xce.io/gpu": 1})
        # Ran on workers that could not read NVML: ticks without a GPU figure.
        d.run(3, "blind", [{"memory_rss": M, "cpu_ms": 1000}], requests={"xce.io/gpu": 1})

        rep = d.drift()
        rows = _rows(rep)
        train = rows[("train", "xce.io/gpu")]
        assert (train["runs"], train["declared"], train["measured_median"], train["measured_max"], train["ratio"],
                train["verdict"]) == (20, 2, 0, 0, 0.0, "far-below"), train
        assert train["wasted_per_placement"] == 2 and "2 of 2 (100%) wasted" in train["text"]
        render = rows[("render", "xce.io/gpu")]
        assert (render["declared"], render["measured_median"], render["ratio"], render["verdict"]) == (1, 1, 1.0, "ok")
        # The worker's counter is not a capacity: never reported by its own name.
        assert not any(r["resource"] == "gpu_util_milli" for r in rep["rows"] + rep["insufficient"])
        assert [(u["job_type"], u["resource"], u["runs"]) for u in rep["unmeasured"]] == [
            ("blind", "xce.io/gpu", 3)], rep["unmeasured"]
        assert "never measured (no worker it ran on could read its GPUs' utilisation through NVML" in \
            rep["unmeasured"][0]["text"]

        # The records of one run: the GPUs in GPUs (peak and mean are the run's average), the exact
        # average in thousandths beside them.
        by_res = {r["resource"]: r for r in _store_rows(tmp_path, db_url) if r["jobid"] == idle[0]}
        assert set(by_res) == {"cpu_ms", "gpu_util_milli", "mem", "xce.io/cpu-milli", "xce.io/gpu"}
        gpu = by_res["xce.io/gpu"]
        assert (gpu["declared"], gpu["peak"], gpu["mean"], gpu["samples"]) == (2, 0, 0, 2)
        util = by_res["gpu_util_milli"]
        assert (util["declared"], util["peak"], util["mean"], util["samples"]) == (0, 300, 250, 2)
        blind = {r["resource"]: r for r in _store_rows(tmp_path, db_url) if r["job_type"] == "blind"}
        assert (blind["xce.io/gpu"]["declared"], blind["xce.io/gpu"]["samples"]) == (1, 0)
    finally:
        api.close()
        ctl.stop()
