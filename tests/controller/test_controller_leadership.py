"""Several controllers on one PostgreSQL database: one leads, the others redirect and take over.

Every test runs real controller processes on a schema of its own (the ``pg_url`` fixture), so the
lease row is the test's own; nothing here is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest
import sqlalchemy as sa
from pgschema import fresh_schema

from xce.client.follow import LEADER_HEADER, Session
from xce.client.launch import start_controller
from xce.testing.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LEASE = "2"  # seconds: short, so that takeovers in these tests are quick


def start_pair(tmp_path, db, lease=LEASE):
    """Two controllers on the same database (tokens live there: both accept the same); the first leads."""
    a = start_controller(tmp_path / "a", db=db, extra_args=("--lease-timeout", lease))
    b = start_controller(tmp_path / "b", db=db, extra_args=("--lease-timeout", lease))
    return a, b


def status(url: str, token: str) -> dict:
    return httpx.get(url + "/v1/status", headers={"Authorization": f"Bearer {token}"}, timeout=10).json()




def role(url: str, token: str) -> str | None:
    try:
        return status(url, token)["controller"]["role"]
    except (httpx.HTTPError, ValueError):
        return None


def db_engine(pg_url: str) -> sa.engine.Engine:
    return sa.create_engine(pg_url)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two controllers left running for the tests that do not stop either (they use distinct jobs)."""
    with fresh_schema() as url:
        a, b = start_pair(tmp_path_factory.mktemp("pair"), url)
        try:
            yield a, b
        finally:
            b.stop()
            a.stop()


def test_one_leads_the_other_redirects_to_it(pair):
    a, b = pair
    token = a.user_token('alice', admin=True)
    if True:
        sa_, sb = status(a.url, token), status(b.url, token)
        assert sa_["controller"]["role"] == "leader" and sb["controller"]["role"] == "follower"
        assert sb["leader"]["url"] == a.url and sb["leader"]["term"] == sa_["leader"]["term"] == 1
        assert sa_["database"]["revision"] == sa_["database"]["head"]
        auth = {"Authorization": f"Bearer {token}"}
        # A follower sends every call to the leader, body and all (307 keeps the method)...
        r = httpx.post(b.url + "/v1/jobs?x=1", json={"command": ["true"]}, headers=auth)
        assert r.status_code == 307, r.text
        assert r.headers[LEADER_HEADER] == a.url and r.headers["location"] == a.url + "/v1/jobs?x=1"
        assert httpx.get(b.url + "/v1/jobs", headers=auth).status_code == 307
        # ...and wrote nothing itself.
        mine = {"all": True, "user": "admin", "queue": "normal"}
        before = httpx.get(a.url + "/v1/jobs", headers=auth, params=mine).json()["jobs"]
        assert all(j["command"] != ["true", "redirected"] for j in before)
        # A client given both addresses, the follower first, lands on the leader.
        with Session([b.url, a.url], token) as http:
            r = http.post("/v1/jobs", json={"command": ["true", "redirected"]})
            assert r.status_code == 201
            assert http.get(f"/v1/jobs/{r.json()['jobid']}").json()["command"] == ["true", "redirected"]
        # Metrics say who leads.
        assert "xce_controller_leader 0.0" in httpx.get(b.url + "/metrics", headers=auth).text
        assert "xce_controller_leader 1.0" in httpx.get(a.url + "/metrics", headers=auth).text


def read_feed(client: Session, after: int) -> tuple[list[dict], int]:
    got = []
    while True:
        page = client.get("/v1/sched/events", params={"after": after, "limit": 500}).json()
        if not page["events"]:
            return got, after
        got += page["events"]
        after = page["last_seq"]


def test_kill9_of_the_leader_the_follower_takes_over_and_continues_ids_and_feed(tmp_path, pg_url):
    a, b = start_pair(tmp_path, pg_url)
    try:
        token, sched_token = a.user_token('alice', admin=True), a.token("scheduler")
        urls = [a.url, b.url]
        with Session(urls, token) as admin, Session(urls, sched_token) as sched:
            cursor = sched.get("/v1/sched/state").json()["seq"]
            ids = [admin.post("/v1/jobs", json={"command": ["sleep", str(i)]}).json()["jobid"] for i in range(20)]
            before, cursor = read_feed(sched, cursor)
            a.kill9()
            killed = time.monotonic()
            wait_for(lambda: role(b.url, token) == "leader", 15, "the follower to take over")
            took = time.monotonic() - killed
            # The client follows without being told: the dead address is skipped.
            more = [admin.post("/v1/jobs", json={"command": ["true"]}).json()["jobid"] for _ in range(5)]
            after, _ = read_feed(sched, cursor)
        assert took <= 10.0, took  # the worst case; the lease (2 s here) ran out, then one look later
        assert more == list(range(ids[-1] + 1, ids[-1] + 6))  # counters reloaded from the database
        seqs = [e["seq"] for e in before + after]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, no duplicate
        pushed = [j["jobid"] for e in before + after if e["event"]["type"] == "JOBS_PUSH"
                  for j in e["event"]["payload"]["jobs"]]
        assert pushed == ids + more
        st = status(b.url, token)
        assert st["leader"]["term"] == 2 and st["leader"]["url"] == b.url
        assert "taking over from" in b.log()
    finally:
        b.stop()
        a.stop()


def test_a_leader_that_stops_cleanly_hands_over_at_once(tmp_path, pg_url):
    a, b = start_pair(tmp_path, pg_url, lease="10")
    try:
        token = a.user_token('alice', admin=True)
        a.stop()
        stopped = time.monotonic()
        wait_for(lambda: role(b.url, token) == "leader", 15, "the follower to take over")
        assert time.monotonic() - stopped < 7.0  # well before the 10 s lease ran out: the leader gave it up
    finally:
        b.stop()


def test_a_follower_accepts_a_token_the_leader_has_just_issued(tmp_path, pg_url):
    """A follower's copy of the tokens is reloaded at its leadership ticks (every 15 s with a 60 s lease
    here); one the leader issued since is looked up in the table before it is refused, so `xceadmin
    token create` and at once `xce status` at a follower works (it answered "invalid token")."""
    a, b = start_pair(tmp_path, pg_url, lease="60")
    try:
        admin = {"Authorization": f"Bearer {a.user_token('alice', admin=True)}"}
        made = httpx.post(a.url + "/v1/admin/tokens", json={"name": "newcomer"}, headers=admin, timeout=10).json()
        r = httpx.get(b.url + "/v1/status", headers={"Authorization": f"Bearer {made['token']}"}, timeout=10)
        assert r.status_code == 200 and r.json()["controller"]["role"] == "follower", r.text
        forged = made["token"][:-4] + ("aaaa" if not made["token"].endswith("aaaa") else "bbbb")
        r = httpx.get(b.url + "/v1/status", headers={"Authorization": f"Bearer {forged}"}, timeout=10)
        assert r.status_code == 401 and "invalid token" in r.text  # its id is known, its secret is not
        r = httpx.get(b.url + "/v1/status", headers={"Authorization": "Bearer xce2_nosuchid.secret"}, timeout=10)
        assert r.status_code == 401, r.text
    finally:
        b.stop()
        a.stop()


def test_split_brain_a_paused_leader_writes_nothing_after_a_takeover(tmp_path, pg_url):
    """SIGSTOP the leader past its lease; the follower takes over and works; SIGCONT the old leader:
    requests that waited in its socket, and its own loops, must not write a thing."""
    a, b = start_pair(tmp_path, pg_url)
    engine = db_engine(pg_url)
    try:
        token = a.user_token('alice', admin=True)
        auth = {"Authorization": f"Bearer {token}"}
        first = httpx.post(a.url + "/v1/jobs", json={"command": ["true"]}, headers=auth).json()["jobid"]
        os.kill(a.pid, signal.SIGSTOP)
        try:
            wait_for(lambda: role(b.url, token) == "leader", 15, "the follower to take over")
            # A client that still believes in the old leader: its request waits in the paused process.
            answers: list[httpx.Response] = []
            stale = threading.Thread(target=lambda: answers.append(
                httpx.post(a.url + "/v1/jobs", json={"command": ["echo", "stale"]}, headers=auth, timeout=60)))
            stale.start()
            kill_stale = threading.Thread(target=lambda: answers.append(
                httpx.post(a.url + f"/v1/jobs/{first}/kill", headers=auth, timeout=60)))
            kill_stale.start()
            new = [httpx.post(b.url + "/v1/jobs", json={"command": ["true"]}, headers=auth).json()["jobid"]
                   for _ in range(3)]
            time.sleep(0.5)
        finally:
            os.kill(a.pid, signal.SIGCONT)
        stale.join(30)
        kill_stale.join(30)
        assert len(answers) == 2
        for r in answers:
            # Refused, and pointed at the new leader: 503 from the fence, or 307 once it knows.
            assert r.status_code in (307, 503), r.text
            assert r.headers[LEADER_HEADER] in (b.url, "")
        wait_for(lambda: role(a.url, token) == "follower", 10, "the old leader to step down")
        time.sleep(2.5)  # its loops (liveness, pruning, renewal) get every chance to write
        with engine.connect() as c:
            jobs = c.execute(sa.text("select id, state, command from jobs order by id")).all()
            seqs = [r[0] for r in c.execute(sa.text("select seq from events order by seq"))]
            lease = c.execute(sa.text("select term, url from leadership")).one()
            history = c.execute(sa.text("select jobid, to_state from job_history order by id")).all()
        assert [j.id for j in jobs] == [first, *new] and new == [first + 1, first + 2, first + 3]
        assert all(json.loads(j.command) != ["echo", "stale"] for j in jobs)
        assert [j.state for j in jobs] == ["PEND"] * 4  # the stale kill did not happen
        assert history == [(j, "PEND") for j in [first, *new]]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        assert tuple(lease) == (2, b.url)
        assert "no longer leads" in a.log()
    finally:
        engine.dispose()
        b.stop()
        a.stop()


def test_the_cli_follows_the_leader_through_a_list_of_addresses(tmp_path, pair):
    a, b = pair
    if True:
        import socket

        with socket.socket() as s:  # a port where nothing listens
            s.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{s.getsockname()[1]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
        env.update(XCE_URL=f"{dead},{b.url},{a.url}", XCE_TOKEN=a.user_token('alice', admin=True))

        def xce(*args):
            return subprocess.run([sys.executable, "-m", "xce.cli.main", *args], env=env, capture_output=True,
                                  text=True, timeout=60, cwd=tmp_path)

        sub = xce("submit", "--json", "--", "true", "from", "the", "cli")
        assert sub.returncode == 0, sub.stderr
        jobid = json.loads(sub.stdout)["jobid"]
        shown = xce("jobs", "--json", "-a", "-u", "all", str(jobid))
        assert shown.returncode == 0, shown.stderr
        assert [j["command"] for j in json.loads(shown.stdout)["jobs"]] == [["true", "from", "the", "cli"]]
        # Only dead addresses: retried for as long as XCE_RETRY_S says (a controller may be
        # restarting), said once on stderr, then the reason.
        env["XCE_URL"], env["XCE_RETRY_S"] = dead, "2"
        started = time.monotonic()
        r = xce("jobs")
        assert r.returncode == 3 and f"cannot reach the controller at {dead}" in r.stderr
        assert r.stderr.count("retrying for up to 2s") == 1
        assert 2 <= time.monotonic() - started < 10
        env["XCE_URL"] = f"{dead},notaurl"
        r = xce("jobs")
        assert r.returncode == 2 and "invalid controller URL 'notaurl'" in r.stderr


def test_a_retried_submission_creates_its_jobs_once(pair):
    a, _ = pair
    admin = {"Authorization": f"Bearer {a.user_token('alice', admin=True)}"}
    bob = {"Authorization": "Bearer " + httpx.post(a.url + "/v1/admin/users", json={"name": "bob"},
                                                   headers=admin).json()["token"]}
    body = {"command": ["true"], "array": 3}
    one = httpx.post(a.url + "/v1/jobs", json=body, headers={**bob, "Idempotency-Key": "k-1"})
    two = httpx.post(a.url + "/v1/jobs", json=body, headers={**bob, "Idempotency-Key": "k-1"})
    assert one.status_code == two.status_code == 201
    first = one.json()["jobids"]
    assert two.json()["jobids"] == first and len(first) == 3 and two.json()["duplicate"] is True
    other = httpx.post(a.url + "/v1/jobs", json=body, headers={**bob, "Idempotency-Key": "k-2"})
    # The retry was given ids before its key was found applied (in its group's transaction): they
    # stay unused, the next submission's follow them.
    assert other.json()["jobids"] == [first[-1] + 4, first[-1] + 5, first[-1] + 6]
    # A key is the submitter's own: another user's same key is another submission.
    theirs = httpx.post(a.url + "/v1/jobs", json=body, headers={**admin, "Idempotency-Key": "k-1"})
    assert theirs.json()["jobids"][0] == first[-1] + 7 and "duplicate" not in theirs.json()
    jobs = httpx.get(a.url + "/v1/jobs", params={"all": True}, headers=bob).json()["jobs"]
    assert [j["jobid"] for j in jobs] == first + other.json()["jobids"]
    bad = httpx.post(a.url + "/v1/jobs", json=body, headers={**bob, "Idempotency-Key": "x" * 200})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["header", "Idempotency-Key"]


# -- in one process: the fence and the reload, step by step ------------------------------------

def open_controller(state_dir, db, lease_s=0.5):
    from xce.controller.service import Controller, Settings

    ctl = Controller(Settings(state_dir=state_dir, db=db, lease_s=lease_s, url=f"http://{state_dir.name}:1"))
    ctl.open()
    return ctl


def test_the_fence_refuses_a_deposed_leaders_transaction_and_the_new_leader_continues(tmp_path, pg_url):
    from xce.controller.ha.leadership import NotLeader
    from xce.controller.jobs import submission
    from xce.controller.web.models import SubmitRequest

    # Leases long enough that neither runs out while the other opens, however loaded the machine;
    # a's runs out when the test says so, on the database's clock, as a lease a leader stopped
    # renewing does (a has no event loop here: it never renews).
    a = open_controller(tmp_path / "a", pg_url, lease_s=60)
    b = open_controller(tmp_path / "b", pg_url, lease_s=60)
    try:
        assert a.leader and not b.leader
        first = submission.submit(a, "ann", SubmitRequest(command=["true"]))["jobid"]
        engine = db_engine(pg_url)
        with engine.begin() as conn:
            conn.execute(sa.text("update leadership set expires = expires - 120000000"))
        engine.dispose()
        assert b.try_lead() and b.leader
        with pytest.raises(NotLeader, match="http://b:1"):  # a still believes it leads: the fence says no
            submission.submit(a, "ann", SubmitRequest(command=["stale"]))
        assert not a.leader  # and it stepped down
        with pytest.raises(NotLeader):
            submission.submit(a, "ann", SubmitRequest(command=["stale"]))  # it does not lead at all now
        second = submission.submit(b, "ann", SubmitRequest(command=["true"]))["jobid"]
        assert second == first + 1  # b reloaded the counters
        with b.tx() as conn:
            commands = [r[0] for r in conn.execute(sa.text("select command from jobs order by id"))]
        assert commands == ['["true"]', '["true"]']
    finally:
        b.close()
        a.close()


def test_a_controller_that_leads_again_gives_every_host_a_fresh_grace(tmp_path, pg_url):
    from xce.controller.hosts import fleet
    from xce.controller.web.models import RegisterRequest

    a = open_controller(tmp_path / "a", pg_url, lease_s=30)
    try:
        fleet.register(a, RegisterRequest(name="h1", resources={"slots": 1}, load={}))
        a.step_down("a test")
        a.hosts["h1"].seen_mono -= 3600  # it followed for an hour; its memory of h1 is that old
        assert a.try_lead()  # the lease is still its own: it takes it back, with the next term
        assert fleet.check_liveness(a) == [] and a.hosts["h1"].status == "ok"
        assert a.lease.term == 2
    finally:
        a.close()
