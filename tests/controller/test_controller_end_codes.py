"""How a finished job ended, in one word (``end``), and job names of any characters with ``*`` patterns,
against a real controller on SQLite and on PostgreSQL: the test plays the scheduler and the worker."""

from __future__ import annotations

import uuid
from contextlib import nullcontext

import pytest
from controller_harness import Api, write_config
from pgschema import fresh_schema

from xce.client.launch import start_controller
from xce.controller.jobs.states import MOVES
from xce.endcodes import CODES, OF_MOVE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(request, tmp_path_factory):
    """One controller per store for the module; tests keep to their own users and hosts."""
    sd = tmp_path_factory.mktemp("state")
    with fresh_schema() if request.param == "postgresql" else nullcontext() as url:
        ctl = start_controller(sd, db=url, config=str(write_config(sd)), extra_args=("--worker-timeout", "600"))
        a = Api(ctl)
        try:
            yield a
        finally:
            a.close()
            ctl.stop()


class Host:
    """A worker and a scheduler played by the test, for one host."""

    def __init__(self, api: Api, name: str) -> None:
        self.api, self.name = api, name
        r = api("worker").post("/v1/workers/register", json={
            "name": name, "resources": {"slots": 8, "maxmem": 16 << 30, "ncpus": 8}, "load": {"mem": 8 << 30},
            "running": []})
        assert r.status_code == 200, r.text

    def run(self, user: str, **body) -> int:
        """A job of ``user``'s, submitted and dispatched here (RUN)."""
        jobid = submit(self.api(user), **body)
        r = self.api("scheduler").post("/v1/sched/decisions", json={"decisions": [{
            "id": uuid.uuid4().hex, "ts": 1,
            "decision": {"op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": [[self.name, 1]]}}]})
        assert r.json()["results"][0]["status"] == "applied", r.text
        return jobid

    def report(self, jobid: int, **body):
        return self.api("worker").post(f"/v1/workers/{self.name}/reports", json={"reports": [{"jobid": jobid, **body}]})


def submit(client, **body) -> int:
    body.setdefault("command", ["sleep", "60"])
    r = client.post("/v1/jobs", json=body)
    assert r.status_code == 201, r.text
    return r.json()["jobid"]


def end_of(api: Api, jobid: int):
    return api("admin").get(f"/v1/jobs/{jobid}").json()["end"]


def test_every_way_a_job_ends_has_its_word_in_detail_listing_and_accounting(api):
    host = Host(api, "hend1")
    done = host.run("eve")
    failed = host.run("eve")
    runlimit = host.run("eve")
    memlimit = host.run("eve")
    caught = host.run("eve")  # caught its limit's SIGTERM and exited 0
    host.report(done, status="finished", exit_code=0)
    host.report(failed, status="finished", exit_code=3, reason="exit code 3")
    host.report(runlimit, status="finished", exit_code=143, signal="SIGTERM", end="RUNLIMIT",
                reason="killed: run limit 0:00:05 reached (TERM_RUNLIMIT)")
    host.report(memlimit, status="finished", exit_code=137, signal="SIGKILL", end="MEMLIMIT",
                reason="killed: memory limit 100M reached (peak 100M)")
    host.report(caught, status="finished", exit_code=0, end="RUNLIMIT")
    not_started = host.run("eve", command=["no-such-command"])
    host.report(not_started, status="start_failed", reason="command not found: no-such-command")

    pending = submit(api("eve"))
    assert api("eve").post(f"/v1/jobs/{pending}/kill").json()["end"] == {"code": "KILLED", "by": "eve"}
    running = host.run("eve")
    r = api("admin").post("/v1/jobs/act", json={"action": "kill", "jobs": [str(running)]})
    assert r.json()["results"][0]["ok"], r.text
    # The worker's later word about the process it stopped does not change who ended the job.
    host.report(running, status="finished", exit_code=143, signal="SIGTERM", end="RUNLIMIT")
    still = submit(api("eve"))

    expected = {done: {"code": "DONE", "by": None}, failed: {"code": "EXIT", "by": None},
                runlimit: {"code": "RUNLIMIT", "by": None}, memlimit: {"code": "MEMLIMIT", "by": None},
                caught: {"code": "DONE", "by": None}, not_started: {"code": "NOT_STARTED", "by": None},
                pending: {"code": "KILLED", "by": "eve"}, running: {"code": "KILLED", "by": "admin"}, still: None}
    assert {j: end_of(api, j) for j in expected} == expected
    listed = api("eve").get("/v1/jobs", params={"all": "true"}).json()["jobs"]
    assert {j["jobid"]: j["end"] for j in listed} == expected
    acct = api("eve").get("/v1/acct").json()["jobs"]
    assert {j["jobid"]: j["end"] for j in acct} == {j: e for j, e in expected.items() if e is not None}
    assert api("admin").get(f"/v1/jobs/{running}").json()["exit_signal"] == "SIGTERM"  # recorded all the same


def test_a_lost_host_ends_its_jobs_node_fail_and_a_requeue_forgets_the_end(api):
    host = Host(api, "hend2")
    jobid = host.run("fay")
    r = api("admin").post("/v1/admin/hosts/hend2/down", json={"requeue": False})
    assert r.status_code == 200 and r.json()["ended"] == [jobid], r.text
    assert end_of(api, jobid) == {"code": "NODE_FAIL", "by": None}
    r = api("fay").post("/v1/jobs/act", json={"action": "requeue", "jobs": [str(jobid)]})
    assert r.json()["results"][0]["ok"], r.text
    assert api("fay").get(f"/v1/jobs/{jobid}").json()["end"] is None


def test_every_move_that_ends_a_job_has_its_word():
    ending = {verb for verb, move in MOVES.items() if move.to in ("DONE", "EXIT")}
    assert ending == set(OF_MOVE) and set(OF_MOVE.values()) <= set(CODES)


def test_an_unknown_end_word_is_refused_naming_the_field(api):
    host = Host(api, "hend3")
    jobid = host.run("gus")
    r = host.report(jobid, status="finished", exit_code=1, end="TIMEOUT")
    assert r.status_code == 422
    (err,) = r.json()["detail"]
    assert err["loc"][-1] == "end" and "'RUNLIMIT'" in err["msg"]
    assert api("gus").get(f"/v1/jobs/{jobid}").json()["state"] == "RUN"  # nothing applied


ODD = ["fit (v2)", "sweep [a] x", "a:b,c*d", "50% of_it", "naïve 名前", "x[1]y"]


def test_names_of_any_characters_are_kept_listed_and_killed_by_name(api):
    c = api("hal")
    ids = {name: submit(c, name=name) for name in ODD}
    assert {j["jobid"]: j["name"] for j in c.get("/v1/jobs").json()["jobs"]} == {v: k for k, v in ids.items()}
    for name, jobid in ids.items():
        (found,) = c.get("/v1/jobs", params={"job": name}).json()["jobs"]
        assert found["jobid"] == jobid
    r = c.post("/v1/jobs/act", json={"action": "kill", "jobs": ["fit (v2)", "sweep [a] x"]})
    assert [x["jobid"] for x in r.json()["results"] if x["ok"]] == [ids["fit (v2)"], ids["sweep [a] x"]]


def test_a_trailing_bracket_is_an_array_and_slurm_element_ids_name_elements(api):
    c = api("ida")
    r = c.post("/v1/jobs", json={"command": ["true"], "name": "my sweep", "array": "1-3"})
    assert r.status_code == 201, r.text
    first = r.json()["jobid"]
    (second,) = c.get("/v1/jobs", params={"job": "my sweep[2]"}).json()["jobs"]
    (third,) = c.get("/v1/jobs", params={"job": f"{first}_3"}).json()["jobs"]
    assert (second["array_index"], third["array_index"]) == (2, 3)


@pytest.mark.parametrize("name, fragment", [
    ("two\nlines", "no control characters"),
    ("tab\there", "no control characters"),
    (" padded", "must not start or end with a space"),
    ("12", "must not be all digits"),
    ("12_3", "digits '_' digits"),
    ("run[2]", "must not end with ']'"),
])
def test_names_that_would_mislead_are_refused_naming_the_field(api, name, fragment):
    r = api("jon").post("/v1/jobs", json={"command": ["true"], "name": name})
    assert r.status_code == 422, r.text
    msgs = {tuple(e["loc"]): e["msg"] for e in r.json()["detail"]}
    assert fragment in msgs[("body", "name")], msgs


def test_star_matches_any_run_and_nothing_else_is_special(api):
    c = api("kim")
    names = ["alpha-1", "alpha-22", "Alpha-3", "al%pha", "al_pha", "alXpha", "beta alpha", "a?b", "a[b"]
    ids = {n: submit(c, name=n) for n in names}

    def listed(pattern: str) -> list[str]:
        jobs = c.get("/v1/jobs", params={"name": pattern}).json()["jobs"]
        return sorted(j["name"] for j in jobs)

    assert listed("alpha-*") == ["alpha-1", "alpha-22"]  # case-sensitive on every store
    assert listed("*alpha*") == ["alpha-1", "alpha-22", "beta alpha"]
    assert listed("al%pha") == ["al%pha"] and listed("al_pha") == ["al_pha"]  # no wildcard: the name itself
    assert listed("al%*") == ["al%pha"] and listed("al_*") == ["al_pha"]  # LIKE's own wildcards are plain
    assert listed("a?*") == ["a?b"] and listed("a[*") == ["a[b"]  # and so are GLOB's
    assert listed("*") == sorted(names)
    # The same rule picks the jobs to act on (bkill -J, scancel -n).
    r = c.post("/v1/jobs/act", json={"action": "kill", "name": "alpha-*"})
    assert sorted(x["jobid"] for x in r.json()["results"] if x["ok"]) == [ids["alpha-1"], ids["alpha-22"]]
    r = c.post("/v1/jobs/act", json={"action": "kill", "jobs": [str(ids["Alpha-3"]), str(ids["al_pha"])],
                                     "name": "*pha"})
    assert [x["jobid"] for x in r.json()["results"] if x["ok"]] == [ids["al_pha"]]


def test_dependencies_name_odd_jobs_in_double_quotes(api):
    c = api("lea")
    first = submit(c, name="prep (v2)")
    r = c.post("/v1/jobs", json={"command": ["true"], "depend": 'done("prep (v2)") && ended(prep (v2))'})
    assert r.status_code == 422
    assert 'written in double quotes: done("my job")' in r.json()["detail"][0]["msg"]
    second = submit(c, depend='done("prep (v2)")')
    (reason,) = c.get(f"/v1/jobs/{second}").json()["pend_reasons"]
    assert reason["step"] == "depend" and f"(done({first}))" in reason["text"]  # stored by id
