"""The jobs API against a real controller process, over HTTP."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def submit(client, **body):
    body.setdefault("command", ["sleep", "60"])
    return client.post("/v1/jobs", json=body)


def loc_msgs(resp):
    assert resp.status_code == 422, resp.text
    return {tuple(e["loc"]): e["msg"] for e in resp.json()["detail"]}


def test_submit_list_kill_lifecycle(api):
    c = api("lifecycle")
    r = submit(c, tasks=2, priority=7, env={"A": "1"}, cwd="/tmp")
    assert r.status_code == 201, r.text
    job = r.json()
    jobid = job["jobid"]
    assert job["queue"] == "normal" and job["user"] == "lifecycle" and job["state"] == "PEND"
    assert job["job"]["tasks"] == 2 and job["job"]["env"] == {"A": "1"}

    listed = c.get("/v1/jobs").json()["jobs"]
    assert [(j["jobid"], j["state"]) for j in listed] == [(jobid, "PEND")]

    r = c.post(f"/v1/jobs/{jobid}/kill")
    assert r.status_code == 200 and r.json()["state"] == "EXIT"
    assert c.get("/v1/jobs").json()["jobs"] == []  # unfinished only by default
    all_jobs = c.get("/v1/jobs", params={"all": True}).json()["jobs"]
    assert [(j["jobid"], j["state"], j["reason"]) for j in all_jobs] == [(jobid, "EXIT", "killed by lifecycle")]

    detail = c.get(f"/v1/jobs/{jobid}").json()
    assert [(h["from"], h["to"], h["by"]) for h in detail["history"]] == [
        (None, "PEND", "lifecycle"), ("PEND", "EXIT", "lifecycle")]
    assert detail["history"][0]["ts"] <= detail["history"][1]["ts"] == detail["end_time"]


def test_impossible_transition_is_409_with_the_reason(api):
    c = api("conflicts")
    jobid = submit(c).json()["jobid"]
    r = c.post(f"/v1/jobs/{jobid}/resume")
    assert r.status_code == 409
    assert r.json() == {"detail": f"cannot resume job {jobid}: it is PEND (only a USUSP/SSUSP job can be resumed)"}
    r = c.post(f"/v1/jobs/{jobid}/suspend")
    assert r.status_code == 409 and "only a RUN job can be suspended" in r.json()["detail"]
    c.post(f"/v1/jobs/{jobid}/kill")
    r = c.post(f"/v1/jobs/{jobid}/kill")
    assert r.status_code == 409 and "it is EXIT" in r.json()["detail"]
    assert c.patch(f"/v1/jobs/{jobid}", json={"priority": 1}).status_code == 409
    assert c.post("/v1/jobs/999999/kill").status_code == 404


def test_array_submission_gives_each_element_an_id_and_index(api):
    c = api("arrays")
    r = submit(c, array=50, stdout="/tmp/out.%J.%I", command=["echo", "x"])
    assert r.status_code == 201, r.text
    res = r.json()
    assert res["count"] == 50 and res["jobids"] == list(range(res["jobid"], res["jobid"] + 50))
    assert res["array_id"] == res["jobid"]
    jobs = c.get("/v1/jobs").json()["jobs"]
    assert [(j["jobid"], j["array_id"], j["array_index"]) for j in jobs] == [
        (res["jobid"] + i, res["jobid"], i + 1) for i in range(50)]
    last = c.get(f"/v1/jobs/{res['jobid'] + 49}").json()
    assert last["stdout"] == f"/tmp/out.{res['jobid']}.50"  # %J: the array's id, as LSF's
    named = c.get("/v1/jobs", params={"job": f"{res['jobid']}[49-50]"}).json()["jobs"]
    assert [j["array_index"] for j in named] == [49, 50]


def test_requests_are_folded_into_the_scheduler_request(api):
    c = api("folding")
    r = submit(c, request="select[mem>1G] rusage[mem=1G]", requests={"mem": 2 << 30, "example.com/gpu": 2},
               limits={"mem": 4 << 30, "xce.io/cpu-milli": 1500})
    assert r.status_code == 201, r.text
    job = r.json()["job"]
    # mem was already in the user's rusage: only the GPU is added, inside the same clause
    assert job["sched_request"] == "select[mem>1G] rusage[mem=1G:example.com/gpu=2]"
    assert job["request"] == "select[mem>1G] rusage[mem=1G]"
    assert job["requests"] == {"mem": 2 << 30, "example.com/gpu": 2}
    assert job["limits"] == {"mem": 4 << 30, "xce.io/cpu-milli": 1500}
    r = submit(c, requests={"mem": 1536 << 10})
    assert r.json()["job"]["sched_request"] == "rusage[mem=1536K]"


@pytest.mark.parametrize("body,loc,fragment", [
    ({"tasks": -1}, ("body", "tasks"), "greater than or equal to 1"),
    ({"tasks": "4"}, ("body", "tasks"), "valid integer"),
    ({"tasks": 1.5}, ("body", "tasks"), "valid integer"),
    ({"command": "sleep 1"}, ("body", "command"), "valid list"),
    ({"command": []}, ("body", "command"), "at least 1"),
    ({"queue": "nope"}, ("body", "queue"), "unknown queue 'nope' (expected one of: closed, high, normal)"),
    ({"queue": "closed"}, ("body", "queue"), "closed to new submissions"),
    ({"project": "chem"}, ("body", "project"), "unknown project 'chem'"),
    ({"requests": {"example.com/gpu": 0.5}}, ("body", "requests", "example.com/gpu"), "whole numbers"),
    ({"limits": {"mem": 1.5}}, ("body", "limits", "mem"), "whole numbers"),
    ({"requests": {"gpu": 1}}, ("body", "requests", "gpu"), "a domain prefix is required"),
    ({"requests": {"ut": 1}}, ("body", "requests", "ut"), "not a quantity"),
    ({"requests": {"example.com/gpu": -1}}, ("body", "requests", "example.com/gpu"), "must not be negative"),
    ({"array": 0}, ("body", "array"), "expected 1 to 100000 elements, got 0"),
    ({"array": 10**7}, ("body", "array"), "expected 1 to 100000 elements"),
    ({"array": "1-3%0"}, ("body", "array"), "expected a limit of at least 1 after '%' at column 5"),
    ({"name": "12"}, ("body", "name"), "must not be all digits"),
    ({"request": "x" * 5000}, ("body", "request"), "at most 4096"),
    ({"command": ["a"] * 5000}, ("body", "command"), "at most 4096"),
    ({"user": "mallory"}, ("body", "user"), "Extra inputs are not permitted"),
    ({"limits": {"slots": 2}}, ("body", "limits", "slots"), 'a limit on "slots" cannot be enforced: no worker can '
     "cap it (expected one of: mem, pids, xce.io/cpu-milli, xce.io/gpu"),
    ({"limits": {"pidz": 2}}, ("body", "limits", "pidz"), "a domain prefix is required"),
])
def test_field_errors_name_the_field_and_the_expectation(api, body, loc, fragment):
    msgs = loc_msgs(submit(api("fields"), **body))
    assert loc in msgs, msgs
    assert fragment in msgs[loc]


def test_malformed_request_string_reports_column_and_expectation(api):
    r = submit(api("fields"), request="select[mem>")
    assert r.status_code == 422
    (err,) = r.json()["detail"]
    assert err["loc"] == ["body", "request"] and err["type"] == "value_error.request_syntax"
    assert err["ctx"]["column"] == 12 and err["ctx"]["expected"] == 'a number, a name or "("'
    assert "column 12" in err["msg"] and "expected a number" in err["msg"]


def test_requests_cannot_fold_into_a_compound_request(api):
    msgs = loc_msgs(submit(api("fields"), request="2*{select[ncpus>1]} + 2*{}", requests={"example.com/gpu": 1}))
    assert "rusage[...] inside each {...}" in msgs[("body", "requests")]


def test_several_problems_are_reported_at_once(api):
    msgs = loc_msgs(submit(api("fields"), queue="nope", requests={"bad": 1}, request="rusage[mem=]"))
    assert {("body", "queue"), ("body", "requests", "bad"), ("body", "request")} <= set(msgs)


def test_modify_publishes_and_validates(api):
    c = api("modder")
    jobid = submit(c).json()["jobid"]
    r = c.patch(f"/v1/jobs/{jobid}", json={"priority": 9, "queue": "high", "project": "physics"})
    assert r.status_code == 200
    assert (r.json()["priority"], r.json()["queue"], r.json()["project"]) == (9, "high", "physics")
    assert loc_msgs(c.patch(f"/v1/jobs/{jobid}", json={"queue": "nope"})) == {
        ("body", "queue"): "unknown queue 'nope' (expected one of: closed, high, normal)"}
    hist = c.get(f"/v1/jobs/{jobid}").json()["history"]
    assert hist[-1]["reason"] == "modified: priority 0 -> 9, queue normal -> high, project default -> physics"


def test_list_filters(api):
    c = api("filters")
    a = submit(c).json()["jobid"]
    b = submit(c, queue="high").json()["jobid"]
    c.post(f"/v1/jobs/{a}/kill")
    assert [j["jobid"] for j in c.get("/v1/jobs", params={"queue": "high"}).json()["jobs"]] == [b]
    assert [j["jobid"] for j in c.get("/v1/jobs", params={"state": "EXIT"}).json()["jobs"]] == [a]
    assert [j["jobid"] for j in c.get("/v1/jobs", params={"all": True}).json()["jobs"]] == [a, b]
    assert [j["jobid"] for j in c.get("/v1/jobs", params={"id": [b]}).json()["jobs"]] == [b]
    others = api("admin").get("/v1/jobs", params={"user": "filters", "all": True}).json()["jobs"]
    assert [j["jobid"] for j in others] == [a, b]
    assert {j["user"] for j in c.get("/v1/jobs", params={"user": "all", "all": True}).json()["jobs"]} > {"filters"}
    r = c.get("/v1/jobs", params={"state": "WAITING"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "state"]


def test_queues_and_projects(api):
    c = api("viewer")
    submit(c, queue="high")
    queues = {q["name"]: q for q in c.get("/v1/queues").json()["queues"]}
    assert list(queues) == ["high", "normal", "closed"]  # by priority
    assert queues["normal"]["default"] and queues["high"]["preemptible_queues"] == ["normal"]
    assert queues["high"]["jobs"]["PEND"] >= 1
    assert [p["name"] for p in c.get("/v1/projects").json()["projects"]] == ["default", "physics"]


def test_openapi_documents_the_api(controller):
    import httpx

    spec = httpx.get(f"{controller.url}/openapi.json").json()
    for path in ("/v1/jobs", "/v1/jobs/{jobid}/kill", "/v1/sched/events", "/v1/sched/decisions",
                 "/v1/workers/register", "/v1/workers/{name}/actions", "/v1/admin/reconfig"):
        assert path in spec["paths"], path


def test_keep_alive_requests_are_not_delayed(api):
    """Guards TCP_NODELAY on accepted connections: without it each request on a kept-alive
    connection waits ~40 ms for a delayed ACK."""
    import time

    c = api("speedy")
    c.get("/v1/whoami")
    t0 = time.perf_counter()
    for _ in range(40):
        assert c.get("/v1/whoami").status_code == 200
    assert time.perf_counter() - t0 < 1.0


def test_quantities_as_text_follow_the_one_grammar(api):
    c = api("qtext")
    r = submit(c, requests={"mem": "2gb", "example.com/gpu": "2"}, limits={"mem": "4G"},
               request="rusage[swp=1GiB] select[mem > 512]")
    assert r.status_code == 201, r.text
    job = r.json()["job"]
    assert job["requests"] == {"mem": 2 << 30, "example.com/gpu": 2} and job["limits"] == {"mem": 4 << 30}
    assert job["sched_request"] == "rusage[swp=1GiB:mem=2G:example.com/gpu=2] select[mem > 512]"
    msgs = loc_msgs(submit(c, requests={"mem": "2X"}, limits={"mem": "0.1M"}))
    assert msgs[("body", "requests", "mem")] == ('quantity "2X" for "mem": expected a number with an optional unit '
                                                 "K, M, G, T or P (powers of 1024)")
    assert msgs[("body", "limits", "mem")] == 'quantity "0.1M" for "mem": expected a whole number of bytes'


def test_select_names_a_host_by_name_and_refuses_unknown_names(api):
    c = api("selnames")
    r = api("worker").post("/v1/workers/register", json={"name": "vm-w1", "resources": {"slots": 2}, "load": {}})
    assert r.status_code == 200, r.text
    r = submit(c, request="select[hname==vm-w1 && mem > 1g]")
    assert r.status_code == 201, r.text
    assert r.json()["job"]["request"] == "select[hname==vm-w1 && mem > 1g]"
    msgs = loc_msgs(submit(c, request="select[hname==vm-w9]"))
    assert msgs[("body", "request")].startswith('unknown host "vm-w9" in select[] (expected one of: ')
    assert "vm-w1" in msgs[("body", "request")]
    # keeping out a host that is not here is no error (LSF: it simply matches every host here)
    r = submit(c, request="select[hname!=vm-w9 && hname!=c061n01]")
    assert r.status_code == 201, r.text
    msgs = loc_msgs(submit(c, request="select[memm > 4G] order[-ut]"))
    assert msgs[("body", "request")].startswith('unknown name "memm" in select[]/order[]: no host and no '
                                                "configuration defines it (expected one of: ")
    # defined() asks whether a host has a name: any name may be asked about
    assert submit(c, request="select[!defined(example.com/fpga)]").status_code == 201


def test_only_limits_something_enforces_are_accepted(api):
    """A cap shown on the job and never kept is refused; a provider's resource is accepted once a
    registered worker says its provider enforces it."""
    c = api("limited")
    r = submit(c, limits={"pids": 64, "xce.io/gpu": 1, "mem": "1G", "xce.io/cpu-milli": 500})
    assert r.status_code == 201, r.text
    assert r.json()["job"]["limits"] == {"pids": 64, "xce.io/gpu": 1, "mem": 1 << 30, "xce.io/cpu-milli": 500}
    msgs = loc_msgs(submit(c, limits={"example.com/matlab": 1}))
    assert msgs[("body", "limits", "example.com/matlab")].startswith(
        'a limit on "example.com/matlab" cannot be enforced: no worker can cap it')
    r = api("worker").post("/v1/workers/register", json={"name": "hlimits", "resources": {
        "slots": 2, "example.com/matlab": 4}, "enforces": ["example.com/matlab"]})
    assert r.status_code == 200, r.text
    assert submit(c, limits={"example.com/matlab": 1}).status_code == 201
