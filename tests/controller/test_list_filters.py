"""``GET /v1/jobs`` filters the Slurm front-ends ask for in their one request per command: several
users (``squeue -u a,b``), several names each with ``*`` (``squeue --name a,b*``), an activity
window (``sacct -S/-E``, ``squeue -t all``), Slurm's ``N_i`` references, and a listing by ids that
the listing cap never cuts (S12). Against a real controller process; jobs are held or killed, so no
worker is needed."""

from __future__ import annotations

import time
import uuid

import pytest

pytestmark = pytest.mark.integration


def submit(api, who: str, **body) -> dict:
    r = api(who).post("/v1/jobs", json={"command": ["true"], "hold": True, **body})
    assert r.status_code == 201, r.text
    return r.json()


def listed(api, who: str = "admin", **params) -> list[int]:
    r = api(who).get("/v1/jobs", params={"limit": 100_000, **params})
    assert r.status_code == 200, r.text
    return [j["jobid"] for j in r.json()["jobs"]]


@pytest.fixture(scope="module")
def people(api):
    """Three users' jobs, named so that each filter selects a known part of them."""
    tag = uuid.uuid4().hex[:6]
    jobs = {
        "ann_fit": submit(api, f"ann{tag}", name=f"fit-{tag}-1")["jobid"],
        "ann_prep": submit(api, f"ann{tag}", name=f"prep-{tag}")["jobid"],
        "bob_fit": submit(api, f"bob{tag}", name=f"fit-{tag}-2")["jobid"],
        "cat_other": submit(api, f"cat{tag}", name=f"other-{tag}")["jobid"],
    }
    return tag, jobs


def test_several_users_comma_separated_or_repeated(api, people):
    tag, jobs = people
    want = sorted([jobs["ann_fit"], jobs["ann_prep"], jobs["bob_fit"]])
    assert listed(api, user=f"ann{tag},bob{tag}") == want
    assert listed(api, user=[f"ann{tag}", f"bob{tag}"]) == want
    assert listed(api, user=f"cat{tag}") == [jobs["cat_other"]]


def test_a_user_still_sees_only_their_own_jobs_by_default(api, people):
    tag, jobs = people
    assert listed(api, f"bob{tag}") == [jobs["bob_fit"]]


def test_several_names_each_with_wildcards(api, people):
    tag, jobs = people
    assert listed(api, user="all", name=[f"fit-{tag}-*", f"prep-{tag}"]) == \
        sorted([jobs["ann_fit"], jobs["ann_prep"], jobs["bob_fit"]])
    assert listed(api, user="all", name=f"fit-{tag}-*") == sorted([jobs["ann_fit"], jobs["bob_fit"]])
    assert listed(api, user="all", name=f"fit-{tag}") == []  # no wildcard: the whole name


def test_slurm_element_references_and_unknown_ids_do_not_hide_the_others(api):
    who = f"arr{uuid.uuid4().hex[:6]}"
    res = submit(api, who, array="1-3")
    array_id = res["array_id"]
    r = api(who).get("/v1/jobs", params={"job": [f"{array_id}_2", "999999999"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [(j["array_id"], j["array_index"]) for j in body["jobs"]] == [(array_id, 2)]
    assert len(body["errors"]) == 1 and "999999999" in body["errors"][0]


def test_a_listing_by_ids_is_not_cut_by_the_limit(api):
    who = f"cap{uuid.uuid4().hex[:6]}"
    ids = [submit(api, who)["jobid"] for _ in range(3)]
    r = api(who).get("/v1/jobs", params={"id": ids, "limit": 1})
    assert [j["jobid"] for j in r.json()["jobs"]] == ids and r.json()["truncated"] is False
    r = api(who).get("/v1/jobs", params={"limit": 1})  # an unfiltered listing still is
    assert len(r.json()["jobs"]) == 1 and r.json()["truncated"] is True


def test_the_activity_window_keeps_unfinished_jobs_and_those_ended_in_it(api):
    who = f"win{uuid.uuid4().hex[:6]}"
    old = submit(api, who)["jobid"]
    assert api(who).post(f"/v1/jobs/{old}/kill").status_code == 200
    time.sleep(1.1)
    middle = int(time.time())
    time.sleep(1.1)
    waiting = submit(api, who)["jobid"]
    ended = submit(api, who)["jobid"]
    assert api(who).post(f"/v1/jobs/{ended}/kill").status_code == 200
    # since: unfinished, or ended since then (finished jobs included without all=true)
    assert listed(api, who, since=middle) == [waiting, ended]
    assert listed(api, who, since=middle - 60) == [old, waiting, ended]
    # until: submitted by then
    assert listed(api, who, since=middle - 60, until=middle) == [old]
    # the summaries carry what sacct and squeue print beside them
    job = api(who).get("/v1/jobs", params={"id": ended}).json()["jobs"][0]
    assert job["end"] == {"code": "KILLED", "by": who}
    assert {"run_limit", "exit_signal", "cwd"} <= set(job)


def test_a_window_that_ends_before_it_starts_is_refused(api):
    r = api("alice").get("/v1/jobs", params={"since": 200, "until": 100})
    assert r.status_code == 422
    assert "until" in r.text


def test_ids_and_elements_resolve_as_each_reference_names_them(api):
    """An array's id names its elements, ``A_i``/``A_[i-j]`` some of them, any other id its own job;
    what names nothing is one sentence in ``errors`` (resolved together, as one reference alone)."""
    who = f"ref{uuid.uuid4().hex[:6]}"
    array = submit(api, who, array="1-3")["array_id"]
    elements = listed(api, who, job=str(array))
    single = submit(api, who)["jobid"]
    assert len(elements) == 3 and elements[0] == array
    assert listed(api, who, job=[f"{array}_[1-2]", str(single)]) == [*elements[:2], single]
    assert listed(api, who, job=f"{array}[3]") == [elements[2]]
    r = api(who).get("/v1/jobs", params={"job": [f"{array}_9", str(single)]}).json()
    assert [j["jobid"] for j in r["jobs"]] == [single]
    assert r["errors"] == [f"job {array}[9] does not exist"]


# -- the compact answer (columns=): what the status commands ask for ---------------------------------

def compact(api, who: str = "admin", **params) -> dict:
    r = api(who).get("/v1/jobs", params={"limit": 100_000, **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_the_columns_asked_are_the_columns_answered_with_the_values_of_whole_jobs(api):
    """Rows of arrays in the order ``columns`` says (each column once), each value what the whole job
    says (stored JSON included, passed on unparsed), for pending, killed and array jobs alike."""
    who = f"col{uuid.uuid4().hex[:6]}"
    killed = submit(api, who, name="gone")["jobid"]
    assert api(who).post(f"/v1/jobs/{killed}/kill").status_code == 200
    submit(api, who, array="1-2", requests={"mem": "1G"})
    asked = ["state", "jobid", "command", "end", "pend_reasons", "requests", "placement", "tasks", "submit_host",
             "cpus_per_task", "array_index", "cwd", "name"]
    body = compact(api, who, all="true", columns=",".join(asked))
    whole = compact(api, who, all="true")["jobs"]
    assert sorted(body["columns"]) == sorted(asked) and body["truncated"] is False
    assert [dict(zip(body["columns"], r, strict=True)) for r in body["rows"]] == \
        [{c: job[c] for c in asked} for job in whole]
    assert len(whole) == 3 and whole[0]["end"] == {"code": "KILLED", "by": who}
    # repeated and comma-separated alike; a column asked twice is answered once
    again = compact(api, who, all="true", columns=["state,jobid", "state", "used"])
    assert sorted(again["columns"]) == ["jobid", "state", "used"]
    assert [{c: v for c, v in zip(again["columns"], r, strict=True) if c != "used"} for r in again["rows"]] == \
        [{"state": j["state"], "jobid": j["jobid"]} for j in whole]


def test_an_unknown_column_is_refused_in_one_line(api):
    r = api("alice").get("/v1/jobs", params={"columns": "jobid,colour"})
    assert r.status_code == 422
    [problem] = r.json()["detail"]
    assert problem["loc"] == ["query", "columns"] and "'colour'" in problem["msg"] and "\n" not in problem["msg"]


def test_compact_pages_follow_the_last_id_and_arrays_collapse(api):
    """``after`` pages a compact listing as a whole one; ``collapse`` answers a waiting array once,
    its indexes in ``array_indexes`` (null on every other job)."""
    who = f"pag{uuid.uuid4().hex[:6]}"
    single = submit(api, who)["jobid"]
    array = submit(api, who, array="1-3")["array_id"]
    whole = compact(api, who, columns="jobid")["rows"]
    pages, after = [], None
    while True:
        body = compact(api, who, columns="jobid", limit=1, **({"after": after} if after else {}))
        pages += body["rows"]
        if not body["truncated"]:
            break
        after = body["rows"][-1][0]
    assert pages == whole and len(whole) == 4
    body = compact(api, who, columns="jobid,array_indexes", collapse="true")
    assert body["rows"] == [[single, None], [array, [1, 2, 3]]]


def test_others_private_columns_are_null_in_the_compact_answer_too(api):
    tag = uuid.uuid4().hex[:6]
    mine = submit(api, f"me{tag}", cwd="/tmp")["jobid"]
    theirs = submit(api, f"you{tag}", cwd="/tmp")["jobid"]
    body = compact(api, f"me{tag}", user=f"me{tag},you{tag}", columns="jobid,command,cwd,user")
    rows = {r["jobid"]: r for r in (dict(zip(body["columns"], r, strict=True)) for r in body["rows"])}
    assert (rows[mine]["command"], rows[mine]["cwd"]) == (["true"], "/tmp")
    assert (rows[theirs]["command"], rows[theirs]["cwd"], rows[theirs]["user"]) == (None, None, f"you{tag}")
