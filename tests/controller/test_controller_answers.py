"""How the controller's answers leave: whole answers in one write, streamed ones as they come, and
every kind of exchange a client or a proxy may start (keep-alive, pipelining, HEAD, 100-continue)
answered in full over a raw socket."""

from __future__ import annotations

import asyncio
import socket

import pytest

from xce.controller.server import _HeadWithBody

HEAD = b"HTTP/1.1 200 OK\r\ndate: x\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n"


class Recorder:
    """Stands in for uvicorn's transport: records the writes and what else is asked of it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str):
        return ("127.0.0.1", 1) if name == "peername" else None


def _turns(*steps):
    """Run each step in its own turn of a real event loop: steps[0] in the first, and so on."""
    async def run():
        for step in steps:
            step()
            await asyncio.sleep(0)
    asyncio.run(run())


def test_a_whole_answer_leaves_in_one_write():
    t = Recorder()
    w: list[_HeadWithBody] = []

    def answer_twice():
        w.append(_HeadWithBody(t))
        w[0].write(HEAD)
        assert t.writes == []
        w[0].write(b"{}")
        w[0].write(HEAD)
        w[0].write(b"[]")

    _turns(answer_twice, lambda: None)
    assert t.writes == [HEAD + b"{}", HEAD + b"[]"]
    assert w[0].get_extra_info("peername") == ("127.0.0.1", 1)  # everything else is the transport's


def test_a_head_without_a_body_leaves_by_the_end_of_the_turn():
    t = Recorder()
    w: list[_HeadWithBody] = []
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    _turns(lambda: w.append(_HeadWithBody(t)) or w[0].write(HEAD),  # a HEAD answer: no body follows
           lambda: w[0].write(interim),
           lambda: w[0].write(b"HTTP/1.1 200 OK\r\n\r\n") or w[0].close())
    assert t.writes == [HEAD, interim, b"HTTP/1.1 200 OK\r\n\r\n"] and t.closed


def _answers(sock: socket.socket, n: int) -> list[bytes]:
    """Read ``n`` answers with a Content-Length, or chunked ones, from ``sock``."""
    buf, out = b"", []
    while len(out) < n:
        head_end = buf.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buf[:head_end].decode("latin-1").lower()
            rest = buf[head_end + 4:]
            if "content-length:" in head:
                size = int(head.split("content-length:")[1].split("\r\n")[0])
                if len(rest) >= size:
                    out.append(buf[:head_end + 4 + size])
                    buf = rest[size:]
                    continue
            elif "100 continue" in head.split("\r\n")[0]:
                out.append(buf[:head_end + 4])
                buf = rest
                continue
            elif rest.endswith(b"0\r\n\r\n"):
                out.append(buf)
                buf = b""
                continue
        chunk = sock.recv(65536)
        assert chunk, f"the controller closed the connection after {len(out)} answers: {buf[:200]!r}"
        buf += chunk
    return out


@pytest.mark.integration
def test_a_raw_client_gets_every_answer_whole(controller):
    auth = f"Authorization: Bearer {controller.user_token('alice', admin=True)}\r\n"
    host, port = controller.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        # Two requests pipelined in one segment, then a HEAD, on one kept-alive connection.
        sock.sendall(f"GET /v1/whoami HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode() * 2)
        first, second = _answers(sock, 2)
        for answer in (first, second):
            assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'"name":"alice","cluster":"testcluster"}')
        sock.sendall(f"HEAD /v1/whoami HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
        head = sock.recv(65536)  # no body follows a HEAD answer, whatever its Content-Length says
        assert head.startswith(b"HTTP/1.1 ") and head.endswith(b"\r\n\r\n")
        # A client that waits for 100 Continue before its body gets it, then the answer.
        body = b'{"command": ["true"], "queue": "normal"}'
        sock.sendall(f"POST /v1/jobs HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n".encode())
        (interim,) = _answers(sock, 1)
        assert interim.startswith(b"HTTP/1.1 100 ")
        sock.sendall(body)
        (created,) = _answers(sock, 1)
        assert created.startswith(b"HTTP/1.1 201 ") and b'"jobid":' in created
