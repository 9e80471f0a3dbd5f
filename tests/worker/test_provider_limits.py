"""``--limit`` on a provider's resource: the worker asks the provider that enforces it before the job
starts, and refuses to start the job uncapped where nothing here enforces it."""

from __future__ import annotations

from xce.providers.base import ResourceProvider
from xce.worker.agent import Agent


class Licences(ResourceProvider):
    resource_name = "example.com/matlab"
    enforces_limits = True

    def __init__(self) -> None:
        self.held: dict[int, int] = {}

    def capacity(self) -> int:
        return 4

    def is_available(self) -> bool:
        return True

    def enforce_limit(self, job, amount: int) -> None:
        if amount > 2:
            raise ValueError(f"the licence server grants at most 2 seats per job, not {amount}")
        self.held[job.jobid] = amount


def _job(jobid: int, cwd, limit: int, name: str = "example.com/matlab") -> dict:
    return {"jobid": jobid, "user": "x", "tasks": 1, "command": ["true"], "cwd": str(cwd),
            "limits": {name: limit}, "placement": [["h1", 1]]}


def test_a_providers_limit_is_enforced_before_the_job_starts_or_the_start_fails(tmp_path):
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True)
    lic = a.enforcers["example.com/matlab"] = Licences()
    try:
        a._start(_job(1, tmp_path, 2))
        a._start(_job(2, tmp_path, 3))
        a._start(_job(3, tmp_path, 1, "example.com/other"))
        assert lic.held == {1: 2} and 1 in a.jobs and 2 not in a.jobs and 3 not in a.jobs
        reports = []
        while not a.outbox.empty():
            reports.append(a.outbox.get_nowait())
        failed = {body["jobid"]: body["reason"] for kind, _, body, _ in reports
                  if kind == "status" and body["status"] == "start_failed"}
        assert failed == {
            2: "cannot enforce --limit example.com/matlab=3 on h1: the licence server grants at most 2 seats per "
               "job, not 3",
            3: "cannot enforce --limit example.com/other=1 on h1: no provider on this host enforces it"}
    finally:
        for jp in list(a.jobs.values()):
            jp.kill_now("test over")
            if jp.popen:
                jp.popen.wait()
