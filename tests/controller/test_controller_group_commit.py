"""Concurrent single submissions share commits (group commit), and each is answered only once it is
committed, on SQLite and on PostgreSQL."""

from __future__ import annotations

import re
import threading

import httpx
import pytest

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration

CLIENTS, EACH = 16, 8


def _counter(text: str, name: str) -> float:
    m = re.search(rf"^{name}(?:\{{[^}}]*\}})? (\S+)$", text, re.M)
    assert m, name
    return float(m.group(1))


def _storm(ctl, headers: dict[str, str], submit) -> None:
    """CLIENTS clients at once, each on its own connection, each calling ``submit(client, n, i)``
    EACH times."""
    start = threading.Barrier(CLIENTS)

    def client(n: int) -> None:
        with httpx.Client(base_url=ctl.url, headers=headers, timeout=60) as c:
            start.wait()
            for i in range(EACH):
                submit(c, n, i)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)


def test_concurrent_submissions_share_commits_and_are_durable_when_answered(tmp_path, db_url):
    ctl = start_controller(tmp_path, db=db_url)
    try:
        headers = {"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"}
        answered: list[int] = []
        problems: list[str] = []
        lock = threading.Lock()

        def submit(c: httpx.Client, n: int, i: int) -> None:
            r = c.post("/v1/jobs", json={"command": ["echo", str(n), str(i)], "priority": n})
            if r.status_code != 201:
                problems.append(r.text)
                return
            jobid = r.json()["jobid"]
            # answered means committed: another connection sees it at once
            if httpx.get(f"{ctl.url}/v1/jobs/{jobid}", headers=headers).status_code != 200:
                problems.append(f"job {jobid} answered but not readable")
            with lock:
                answered.append(jobid)

        _storm(ctl, headers, submit)
        assert problems == []
        assert len(answered) == len(set(answered)) == CLIENTS * EACH
        metrics = httpx.get(f"{ctl.url}/metrics", headers=headers).text
        commits = _counter(metrics, "xce_submit_commits_total")
        assert 1 <= commits < CLIENTS * EACH, commits  # some submissions shared a commit
        # each submission is its own JOBS_PUSH, in id order, and nothing else was written
        sched = {"Authorization": f"Bearer {ctl.token('scheduler')}"}
        events = httpx.get(f"{ctl.url}/v1/sched/events", params={"after": 0, "limit": 1000}, headers=sched).json()
        pushed = [j["jobid"] for e in events["events"] if e["event"]["type"] == "JOBS_PUSH"
                  for j in e["event"]["payload"]["jobs"]]
        assert pushed == sorted(answered)
    finally:
        ctl.stop()


def test_a_refused_submission_never_joins_a_group(tmp_path):
    ctl = start_controller(tmp_path)
    try:
        headers = {"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"}
        results: list[int] = []

        def post(body):
            results.append(httpx.post(f"{ctl.url}/v1/jobs", json=body, headers=headers, timeout=60).status_code)

        bodies = [{"command": ["true"]}, {"command": ["true"], "queue": "nope"}] * 10
        threads = [threading.Thread(target=post, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(results) == [201] * 10 + [422] * 10
        jobs = httpx.get(f"{ctl.url}/v1/jobs", params={"user": "all"}, headers=headers).json()["jobs"]
        assert len(jobs) == 10
    finally:
        ctl.stop()


def test_retries_under_one_key_create_their_jobs_once_even_in_one_group(tmp_path, db_url):
    """Clients that retry (the CLI sends an Idempotency-Key with every submission) while others
    submit: each key's jobs exist once, and every retry is answered with the first one's job ids,
    whether the first was committed earlier or waits in the same group."""
    ctl = start_controller(tmp_path, db=db_url)
    try:
        headers = {"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"}
        first = httpx.post(f"{ctl.url}/v1/jobs", json={"command": ["true"]},
                           headers={**headers, "Idempotency-Key": "k-0"}).json()["jobid"]
        answers: dict[str, set[int]] = {}
        refused: list[str] = []
        lock = threading.Lock()

        def submit(c: httpx.Client, n: int, i: int) -> None:
            key = f"k-{(n + i) % 6}"  # six keys, each sent by many clients at once
            r = c.post("/v1/jobs", json={"command": ["true"]}, headers={"Idempotency-Key": key})
            with lock:
                if r.status_code != 201:
                    refused.append(r.text)
                else:
                    answers.setdefault(key, set()).add(r.json()["jobid"])

        _storm(ctl, headers, submit)
        assert refused == []
        assert sorted(answers) == [f"k-{i}" for i in range(6)]
        assert all(len(ids) == 1 for ids in answers.values()), answers
        assert answers["k-0"] == {first}
        jobs = httpx.get(f"{ctl.url}/v1/jobs", params={"user": "all"}, headers=headers).json()["jobs"]
        assert sorted(j["jobid"] for j in jobs) == sorted(i for ids in answers.values() for i in ids)
    finally:
        ctl.stop()


def test_every_key_of_a_shared_commit_is_kept_for_later_retries(tmp_path, db_url):
    """Many clients, each submission under its own key, so that commits carry many keys at once (they
    are written in one statement): a retry of any of them afterwards gets the first's job ids and
    creates nothing."""
    ctl = start_controller(tmp_path, db=db_url)
    try:
        headers = {"Authorization": f"Bearer {ctl.user_token('alice', admin=True)}"}
        first: dict[str, int] = {}
        lock = threading.Lock()

        def submit(c: httpx.Client, n: int, i: int) -> None:
            key = f"c{n}-s{i}"
            r = c.post("/v1/jobs", json={"command": ["true"]}, headers={"Idempotency-Key": key})
            assert r.status_code == 201, r.text
            with lock:
                first[key] = r.json()["jobid"]

        _storm(ctl, headers, submit)
        assert len(first) == len(set(first.values())) == CLIENTS * EACH
        metrics = httpx.get(f"{ctl.url}/metrics", headers=headers).text
        assert _counter(metrics, "xce_submit_commits_total") < CLIENTS * EACH  # some commits held several keys
        with httpx.Client(base_url=ctl.url, headers=headers, timeout=60) as c:
            for key, jobid in first.items():
                again = c.post("/v1/jobs", json={"command": ["true"]}, headers={"Idempotency-Key": key})
                assert again.status_code == 201 and again.json()["jobid"] == jobid, (key, again.text)
            jobs = c.get("/v1/jobs", params={"user": "all", "limit": 1000}).json()["jobs"]
        assert sorted(j["jobid"] for j in jobs) == sorted(first.values())
    finally:
        ctl.stop()
