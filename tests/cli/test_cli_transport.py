"""The CLI's HTTP/1.1 client against real sockets: the answers a controller (or a proxy in front of
it) may give, a kept-alive connection the server dropped, TLS with a private CA."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
import time

import pytest

from xce.cli.client import ApiError, Client, Unreachable, query
from xce.client.follow import Session
from xce.client.transport import Connection, Endpoint, Refused, TransportError


class Server:
    """Answers each request on 127.0.0.1 with the next canned reply; records what it received."""

    def __init__(self, replies: list[bytes], close_after: int | None = None, tls: ssl.SSLContext | None = None,
                 delay: float = 0.0):
        self.replies = list(replies)
        self.delay = delay
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.tls = tls
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _read_request(self, conn) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v)
        while len(body) < length:
            body += conn.recv(65536)
        return head + b"\r\n\r\n" + body

    def _serve(self) -> None:
        while self.replies:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.tls is not None:
                try:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                except (ssl.SSLError, OSError):
                    conn.close()
                    continue
            served = 0
            with conn:
                while self.replies:
                    req = self._read_request(conn)
                    if req is None:
                        break
                    self.requests.append(req)
                    time.sleep(self.delay)
                    conn.sendall(self.replies.pop(0))
                    served += 1
                    if self.close_after is not None and served >= self.close_after:
                        break

    def close(self) -> None:
        self.sock.close()


def _json(status: int, obj, extra: str = "") -> bytes:
    body = json.dumps(obj).encode()
    return (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
            ).encode() + body


def test_content_length_chunked_and_to_the_end():
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"4\r\n{\"a\"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\nX-Trailer: y\r\n\r\n")
    to_end = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"b\": 2}"
    srv = Server([_json(200, {"n": 1}), chunked, to_end])
    try:
        c = Client(f"http://127.0.0.1:{srv.port}/base/", "tok")
        assert c.get("/v1/x", id=[1, 2], q="a b&c", none=None) == {"n": 1}
        assert c.post("/v1/y", {"k": "v"}) == {"a": 1}
        assert c.get("/v1/z") == {"b": 2}
    finally:
        srv.close()
    first, second, _ = srv.requests
    assert first.startswith(b"GET /base/v1/x?id=1&id=2&q=a%20b%26c HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Authorization: Bearer tok\r\n" in first
    assert second.startswith(b"POST /base/v1/y HTTP/1.1") and second.endswith(b'\r\n\r\n{"k":"v"}')


def test_errors_carry_the_detail():
    srv = Server([_json(409, {"detail": "it is PEND"}), _json(422, {"detail": [{"loc": ["body", "queue"],
                                                                                "msg": "unknown"}]})])
    try:
        c = Client(f"http://127.0.0.1:{srv.port}", "t")
        with pytest.raises(ApiError) as err:
            c.post("/v1/jobs/1/resume")
        assert (err.value.status, err.value.detail) == (409, "it is PEND")
        with pytest.raises(ApiError) as err:
            c.post("/v1/jobs", {})
        assert err.value.detail == [{"loc": ["body", "queue"], "msg": "unknown"}]
    finally:
        srv.close()


def test_a_dropped_keep_alive_connection_is_retried_once():
    srv = Server([_json(200, {"n": 1}), _json(200, {"n": 2})], close_after=1)
    try:
        c = Client(f"http://127.0.0.1:{srv.port}", "t")
        assert c.get("/a") == {"n": 1}
        assert c.get("/b") == {"n": 2}  # the first connection was closed by the server: a new one
    finally:
        srv.close()
    assert len(srv.requests) == 2


def test_garbage_and_refusals_are_unreachable(monkeypatch, capsys):
    """Another service on the port is reported at once (waiting will not mend it); a refused
    connection (a controller restarting) is retried for XCE_RETRY_S, said once, then reported."""
    import xce.cli.client as client_mod

    srv = Server([b"SSH-2.0-OpenSSH\r\n\r\n"])
    try:
        started = time.monotonic()
        with pytest.raises(Unreachable, match="not an HTTP answer"):
            Client(f"http://127.0.0.1:{srv.port}", "t").get("/")
        assert time.monotonic() - started < 5 and "retrying" not in capsys.readouterr().err
    finally:
        srv.close()
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    monkeypatch.setattr(client_mod, "RETRY_S", 0.5)
    with pytest.raises(Unreachable, match="Connection refused"):
        Client(f"http://127.0.0.1:{port}", "t").get("/")
    assert capsys.readouterr().err.count("retrying for up to 0.5s") == 1


def test_truncated_answer_is_an_error_not_a_short_body():
    srv = Server([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"a\""], close_after=1)
    try:
        conn = Connection(Endpoint(f"http://127.0.0.1:{srv.port}"))
        with pytest.raises(TransportError, match="middle of an answer"):
            conn.request("GET", "/")
    finally:
        srv.close()


@pytest.mark.parametrize("url,problem", [("ftp://h:1", "expected http"), ("http://:80", "no host"),
                                         ("http://h:x", "not a number"), ("http://h:70000", "out of range"),
                                         ("127.0.0.1:8080", "expected http")])
def test_bad_urls(url, problem):
    with pytest.raises(ValueError, match=problem):
        Endpoint(url)


def test_header_injection_is_refused():
    conn = Connection(Endpoint("http://127.0.0.1:9"))
    with pytest.raises(ValueError, match="line break"):
        conn.request("GET", "/", headers={"Authorization": "Bearer x\r\nX-Admin: 1"})


def test_query_encoding():
    assert query({"a": "x/y", "b": [1, 2], "c": None, "d": "é"}) == "a=x%2Fy&b=1&b=2&d=%C3%A9"


def test_tls_with_a_private_ca(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = Server([_json(200, {"secure": True}), _json(200, {"secure": True})], tls=ctx, close_after=1)
    try:
        ok = Client(f"https://localhost:{srv.port}", "t", ca_file=str(cert))
        assert ok.get("/") == {"secure": True}
        with pytest.raises(Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
            Client(f"https://localhost:{srv.port}", "t", timeout=10).get("/")  # not signed by a CA the system trusts
    finally:
        srv.close()


def test_a_service_session_sends_json_and_reads_status_and_body():
    srv = Server([_json(200, {"actions": []}), _json(409, {"detail": "job 7 is not placed on w1"})])
    try:
        with Session(f"http://127.0.0.1:{srv.port}", "svc") as s:
            r = s.get("/v1/workers/w1/actions", params={"after": 3, "wait": 25.0, "all": True, "none": None})
            assert (r.status_code, r.json()) == (200, {"actions": []})
            r.raise_for_status()
            r = s.post("/v1/workers/w1/reports", json={"reports": [{"jobid": 7, "status": "finished"}]})
            assert r.status_code == 409 and "not placed" in r.text
            with pytest.raises(Refused, match="HTTP 409"):
                r.raise_for_status()
    finally:
        srv.close()
    get, post = srv.requests
    assert get.startswith(b"GET /v1/workers/w1/actions?after=3&wait=25.0&all=true HTTP/1.1\r\n")
    assert b"Authorization: Bearer svc\r\n" in get and b"Idempotency-Key" not in get
    assert b"Idempotency-Key: " in post  # a retried report is recognised, not applied twice
    assert post.endswith(b'{"reports":[{"jobid":7,"status":"finished"}]}')


def test_a_long_poll_waits_longer_than_an_ordinary_request_may():
    srv = Server([_json(200, {"n": 1}), _json(200, {"n": 2})], delay=0.6)
    try:
        with Session(f"http://127.0.0.1:{srv.port}", "svc", timeout=0.2) as s:
            assert s.get("/v1/sched/events", params={"wait": 0.5}, timeout=5.0).json() == {"n": 1}
            with pytest.raises(Unreachable, match="timed out"):
                s.get("/v1/sched/events")  # the session's own 0.2 s again
    finally:
        srv.close()


class EchoServer:
    """Answers each request with its own path, after ``slow`` seconds for ``/slow``: an answer read
    for the wrong request says so."""

    def __init__(self, slow: float) -> None:
        self.slow = slow
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        with conn:
            data = b""
            try:
                while True:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, _, data = data.partition(b"\r\n\r\n")
                    path = head.split(b" ")[1]
                    if path == b"/slow":
                        time.sleep(self.slow)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path))
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()


def test_a_request_interrupted_before_its_answer_leaves_no_answer_for_the_next():
    """Ctrl-C while ``xce submit -I`` waits for an answer, then the kill it sends: the kill must not
    read the interrupted request's answer (it did: 'not an HTTP answer', or the wrong document)."""
    import signal

    server = EchoServer(slow=0.6)
    conn = Connection(Endpoint(f"http://127.0.0.1:{server.port}"))

    def interrupt(*_):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        assert conn.request("GET", "/first").body == b"/first"  # the connection is kept alive
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            conn.request("GET", "/slow")
        time.sleep(0.6)  # the slow answer has been sent by now
        assert conn.request("GET", "/next").body == b"/next"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        conn.close()
        server.close()
