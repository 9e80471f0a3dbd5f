"""The task server (``xce launch``'s other end) as an attacker on the network sees it: the launch
key never crosses the wire, a signed request cannot be sent again or altered, and a wrong or
missing signature starts nothing. A real agent and task server; no controller needed."""

from __future__ import annotations

import json
import socket
import time

import pytest

from xce.protocol import actions
from xce.worker import taskauth
from xce.worker.agent import Agent
from xce.worker.state import ActionArrived

KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def server(tmp_path):
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True)
    a._start({"jobid": 5, "user": "x", "tasks": 1, "command": ["sleep", "30"], "cwd": str(tmp_path),
              "placement": [["h1", 1]], "launch_key": KEY})
    assert 5 in a.jobs
    a.tasks.start()
    port = int(a.tasks.address.rpartition(":")[2])
    yield a, port
    a.stopping.set()
    a.tasks.stop()
    for jp in list(a.jobs.values()):
        jp.kill_now("test over")
        if jp.popen:
            jp.popen.wait()


def _lines(s: socket.socket) -> list[dict]:
    buf, out = b"", []
    s.settimeout(10)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return out
        buf += chunk
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            out.append(json.loads(raw))
            if "error" in out[-1] or out[-1].get("done"):
                return out


def _ask(port: int, make) -> tuple[str, list[dict], bytes]:
    """Connect, read the nonce, send ``make(nonce)``; (nonce, replies, bytes sent)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        nonce = json.loads(f.readline())["nonce"]
        sent = (json.dumps(make(nonce)) + "\n").encode()
        s.sendall(sent)
        return nonce, _lines(s), sent


REQUEST = {"jobid": 5, "argv": ["echo", "hi"], "cwd": "/", "env": {"PATH": "/usr/bin:/bin"}, "tasks": [0],
           "ntasks": 1}


def test_a_signed_request_runs_and_the_key_is_never_on_the_wire(server):
    _, port = server
    nonce, replies, sent = _ask(port, lambda n: taskauth.sign(KEY, n, REQUEST))
    assert KEY.encode() not in sent
    assert replies[0]["started"] == 0 and {"task": 0, "stream": "out", "line": "hi"} in replies, replies
    assert replies[-1] == {"done": True}


def test_a_replayed_altered_unsigned_or_wrongly_keyed_request_starts_nothing(server):
    agent, port = server
    _, replies, sent = _ask(port, lambda n: taskauth.sign(KEY, n, REQUEST))
    captured = json.loads(sent)
    refused = "job 5 does not run on h1"
    # Replayed on a new connection: that one has another nonce.
    assert _ask(port, lambda n: captured)[1] == [{"error": refused}]
    # Altered after signing: another command under the captured signature.
    assert _ask(port, lambda n: taskauth.sign(KEY, n, REQUEST) | {"argv": ["sh", "-c", "id"]})[1] == \
        [{"error": refused}]
    # The old way (the key itself), no MAC, a MAC made with another key.
    assert _ask(port, lambda n: REQUEST | {"key": KEY})[1] == [{"error": refused}]
    assert _ask(port, lambda n: taskauth.sign("f" * 32, n, REQUEST))[1] == [{"error": refused}]
    time.sleep(0.2)
    assert [t for t in agent.jobs] == [5]  # nothing but the job itself runs


def test_a_cluster_of_one_machine_is_not_served_to_the_network(server):
    a, port = server
    assert a.tasks.address == f"127.0.0.1:{port}"
    assert a.tasks.sock.getsockname()[0] == "127.0.0.1"


def test_silent_and_trickling_callers_hold_nothing_for_long(server, monkeypatch):
    from xce.worker import tasks

    a, port = server
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.makefile("rb").readline()  # the nonce
        # One byte every second: each recv returns in time, the whole request never does.
        deadline = started + tasks.REQUEST_WITHIN_S + 10
        answer = b""
        while time.monotonic() < deadline:
            try:
                s.sendall(b" ")
            except OSError:
                break
            s.settimeout(1.0)
            try:
                answer += s.recv(4096)
            except TimeoutError:
                continue
            if not answer or answer.endswith(b"\n"):
                break
    took = time.monotonic() - started
    assert tasks.REQUEST_WITHIN_S - 1 < took < tasks.REQUEST_WITHIN_S + 5, took
    assert b"no whole request within" in answer


def test_beyond_so_many_silent_callers_a_new_one_is_turned_away(server):
    from xce.worker import tasks

    a, port = server
    silent = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(tasks.MAX_UNPROVEN)]
    try:
        for s in silent:
            assert s.makefile("rb").readline()  # each got its nonce: a thread is waiting on each
        with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
            assert extra.recv(100) == b""  # closed at once, no nonce
    finally:
        for s in silent:
            s.close()
    # The silent ones gone (their threads see it at once), the server answers again.
    deadline = time.monotonic() + 5
    while True:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            if s.recv(100).startswith(b'{"nonce"'):
                break
        assert time.monotonic() < deadline, "the server stayed full after its callers left"
        time.sleep(0.05)


def test_an_attach_that_comes_before_the_start_is_told_to_retry_one_to_a_batch_job_is_not(server):
    """The user's ``xce submit -I`` hears "started" from the controller and may reach the head host
    before its worker has had the start (seen in CI): it must be told to retry, not that the job
    has no terminal. A running batch job has none, and retrying would not change that."""
    _, port = server
    attach = {"attach": True, "rows": 24, "cols": 80, "raw": False}
    on_its_way = _ask(port, lambda n: taskauth.sign(KEY, n, attach | {"jobid": 9}))[1]
    assert on_its_way[0]["retry"] is True and "job 9 has no terminal on h1" in on_its_way[0]["error"]
    batch = _ask(port, lambda n: taskauth.sign(KEY, n, attach | {"jobid": 5}))[1]
    assert batch[0]["retry"] is False and "not an interactive job" in batch[0]["error"]


def test_an_attach_while_the_start_is_carried_out_is_told_to_retry(server):
    """The worker's state takes a start at once and its processes (with an interactive job's terminal)
    are made after, outside its turn; under load that takes a while (seen in CI: ``srun`` and
    ``bsub -I`` failed with "has no terminal"). An attach that lands in between must retry."""
    agent, port = server
    job = {"jobid": 7, "user": "x", "tasks": 1, "command": ["true"], "cwd": "/", "placement": [["h1", 1]],
           "options": {"interactive": True}}
    taken = agent._feed(ActionArrived(actions.decode({"kind": "start", "job": job})))
    assert [type(i).__name__ for i in taken] == ["Spawn"]  # taken, not carried out yet
    attach = {"attach": True, "rows": 24, "cols": 80, "raw": False, "jobid": 7}
    starting = _ask(port, lambda n: taskauth.sign(KEY, n, attach))[1]
    assert starting[0]["retry"] is True and "job 7 has no terminal on h1" in starting[0]["error"]
