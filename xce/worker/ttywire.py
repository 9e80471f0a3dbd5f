"""The frames an interactive job's terminal travels in between the worker and its user's ``xce``.

After the attach handshake (JSON lines, :mod:`xce.worker.interactive`) the connection carries raw
terminal bytes, which may be anything, so they are framed rather than put in JSON: one byte of
kind, four of length (big-endian), the payload. Standard library only: ``xce submit -Is`` imports
it.

* to the job: ``INPUT`` (keystrokes, as they were typed), ``WINDOW`` (rows, columns: two
  big-endian 16-bit numbers);
* to the user: ``OUTPUT`` (what the job wrote to its terminal), ``END`` (JSON ``{"exit",
  "signal", "reason"}``, the last frame).
"""

from __future__ import annotations

import os
import struct

INPUT, WINDOW, OUTPUT, END = b"i", b"w", b"o", b"x"
_HEAD = struct.Struct("!cI")
#: Larger frames are a broken or hostile peer: the connection is dropped.
MAX_FRAME = 1 << 20


class BadFrame(Exception):
    """The peer sent something that is not a frame of this protocol."""


def frame(kind: bytes, payload: bytes = b"") -> bytes:
    return _HEAD.pack(kind, len(payload)) + payload


def window(rows: int, cols: int) -> bytes:
    return frame(WINDOW, struct.pack("!HH", max(0, min(rows, 0xFFFF)), max(0, min(cols, 0xFFFF))))


def rows_cols(payload: bytes) -> tuple[int, int]:
    if len(payload) != 4:
        raise BadFrame(f"a window frame has 4 bytes, not {len(payload)}")
    rows, cols = struct.unpack("!HH", payload)
    return rows, cols


class Reader:
    """Frames out of a byte stream that arrives in pieces."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        self.buf += data
        out = []
        while len(self.buf) >= _HEAD.size:
            kind, size = _HEAD.unpack_from(self.buf)
            if size > MAX_FRAME:
                raise BadFrame(f"a frame of {size} bytes (at most {MAX_FRAME})")
            if len(self.buf) < _HEAD.size + size:
                break
            out.append((kind, bytes(self.buf[_HEAD.size:_HEAD.size + size])))
            del self.buf[:_HEAD.size + size]
        return out


def keep_alive(sock) -> None:
    """Find out within about half a minute that the other side is gone without a word (its host or
    the network between): TCP keepalives while idle, and a bound on unacknowledged sends."""
    import socket

    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3),
                        ("TCP_USER_TIMEOUT", 30_000), ("TCP_NODELAY", 1)):
        if hasattr(socket, name):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
            except OSError:
                pass


def drain(fd: int) -> None:
    """Empty a non-blocking wake-up pipe (its bytes only say "look again")."""
    try:
        while os.read(fd, 512):
            pass
    except OSError:
        pass
