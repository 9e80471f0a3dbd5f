"""A SIGTERM to a controller while workers and the scheduler long-poll it: a quiet stop (INFO lines at
most), where it once logged ERROR and two 40-line ``CancelledError`` tracebacks; the admin guide
says ERROR is for what an administrator must fix."""

from __future__ import annotations

import signal
import socket
from urllib.parse import urlsplit

import pytest
from controller_harness import Api

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration


def _long_poll(url: str, token: str, path: str) -> socket.socket:
    """A long-poll left in flight: the request sent, its answer not read."""
    where = urlsplit(url)
    s = socket.create_connection((where.hostname, where.port), timeout=30)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    return s


def test_sigterm_with_long_polls_in_flight_stops_quietly(tmp_path):
    ctl = start_controller(tmp_path)
    api = Api(ctl)
    try:
        assert api("worker").post("/v1/workers/register", json={"name": "qs1", "resources": {"slots": 1}}).is_success
        seq = api("scheduler").get("/v1/sched/events", params={"limit": 10_000}).json()["events"][-1]["seq"]
        polls = [_long_poll(ctl.url, ctl.token("worker"), "/v1/workers/qs1/actions?after=0&wait=30"),
                 _long_poll(ctl.url, ctl.token("scheduler"), f"/v1/sched/events?after={seq}&wait=30")]
        # the polls are in the controller's hands once a later request on another connection is answered
        # (one event loop takes connections in order), and still unanswered
        assert api("admin").get("/v1/status").is_success
        for s in polls:
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.recv(1)
            s.setblocking(True)
        ctl.proc.send_signal(signal.SIGTERM)
        assert ctl.proc.wait(30) == 0
        for s in polls:  # each poll was answered, not cut
            assert s.recv(65536).startswith(b"HTTP/1.1 200"), "a long-poll was cut instead of answered"
            s.close()
    finally:
        api.close()
        ctl.stop()
    log = (tmp_path / "controller.log").read_text()
    assert "Traceback" not in log and "CancelledError" not in log, log
    stopping = log[log.index("listening on"):].splitlines()[1:]  # what it logged from the SIGTERM on
    assert all(" INFO " in line or " DEBUG " in line for line in stopping), log
