"""HTTP/1.1 over one kept-alive socket: what every client of the controller sends it.

Why hand-written: ``xce submit`` runs in shell loops and must finish in under 40 ms, process start
included. httpx costs 80-100 ms of imports, and even the standard library's ``http.client``
costs 8-10 ms because it parses headers with the ``email`` package. The services (worker,
scheduler) use it too: per request, httpx's layers (h11's state machine, URL objects, header
models) cost a worker more CPU than the controller's answer itself. The controller's answers are
small JSON documents with a Content-Length (or chunked), so a request is: write the head and the
body, read the status line and the headers, read the body. ``ssl`` is imported only for
``https://`` URLs.

The seam to extend is :class:`Connection` (``request(method, target, body, headers)`` returning a
:class:`Response`): TLS options go in :class:`Endpoint`, and a client that follows a leader across
several controllers (:class:`xce.client.follow.Session`) makes one Connection per address.
"""

from __future__ import annotations

# The C module under ``socket``: importing ``socket`` itself costs ~2.5 ms of enum set-up, a tenth
# of the whole budget of ``xce submit``. TLS (``https://``) goes through ``socket`` and ``ssl``.
import _socket

MAX_HEAD = 64 * 1024
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def quote(text: str) -> str:
    """Percent-encoding of a path segment or query value (RFC 3986 unreserved characters stay)."""
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in text.encode())


def query(params: dict) -> str:
    """``a=1&id=2&id=3`` from a dict whose list values repeat the key; None values are left out,
    booleans are ``true``/``false``."""
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else (value,):
            text = ("true" if v else "false") if isinstance(v, bool) else str(v)
            pairs.append(f"{quote(str(key))}={quote(text)}")
    return "&".join(pairs)


class TransportError(OSError):
    """The connection failed or the answer was not HTTP/1.1; ``retryable`` when a kept-alive
    connection was closed by the server before it answered (the request can be sent again)."""

    def __init__(self, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class Endpoint:
    """Where a controller listens: ``http://host:port/base`` or ``https://...`` (with ``ca_file``
    to trust a private CA instead of the system's)."""

    __slots__ = ("url", "scheme", "host", "port", "base", "ca_file", "timeout")

    def __init__(self, url: str, *, ca_file: str | None = None, timeout: float = 60.0) -> None:
        from xce.client.urls import split_url

        try:
            self.scheme, self.host, self.port, self.base = split_url(url)
        except ValueError as exc:
            raise ValueError(f"invalid controller URL {url!r} ({exc})") from None
        self.url = url
        self.ca_file, self.timeout = ca_file, timeout

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


class Refused(Exception):
    """The controller answered with an error status (:meth:`Response.raise_for_status`)."""

    def __init__(self, response: "Response") -> None:
        super().__init__(f"HTTP {response.status_code}: {response.text[:300]}")
        self.response = response


class Response:
    """One answer: status, headers (names in lower case) and the whole body."""

    __slots__ = ("status_code", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status_code, self.headers, self.body = status, headers, body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self):
        from xce import wirejson

        return wirejson.loads(self.body)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise Refused(self)


def _ssl_context(ca: str | None):
    """TLS settings for talking to the controller: verify against ``ca``, or the system's CAs."""
    import ssl

    return ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()


class Connection:
    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._sock = None
        self._buf = b""
        self._timeout = endpoint.timeout

    def _connect(self):
        ep = self.endpoint
        if ep.scheme == "https":
            import socket

            sock = socket.create_connection((ep.host, ep.port), timeout=ep.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return _ssl_context(ep.ca_file).wrap_socket(sock, server_hostname=ep.host)
        # An ASCII host name as bytes: getaddrinfo then skips the idna codec and its imports.
        host = ep.host.encode("ascii") if ep.host.isascii() else ep.host
        error: OSError | None = None
        for family, kind, proto, _, address in _socket.getaddrinfo(host, ep.port, 0, _socket.SOCK_STREAM):
            sock = _socket.socket(family, kind, proto)
            try:
                sock.settimeout(ep.timeout)
                sock.connect(address)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            return sock
        raise error or OSError(f"no address for {ep.host}")

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buf = b""
                self._timeout = self.endpoint.timeout

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float | None = None) -> Response:
        """Send one request and read its whole answer; the connection stays open for the next.
        ``timeout`` (seconds per send or receive) replaces the endpoint's for this request: a long
        poll waits longer than an ordinary answer may take."""
        head = [f"{method} {self.endpoint.base}{target} HTTP/1.1", f"Host: {self.endpoint.host_header}"]
        for k, v in (headers or {}).items():
            if "\r" in v or "\n" in v or "\r" in k or "\n" in k:
                raise ValueError(f"header {k!r} contains a line break")
            head.append(f"{k}: {v}")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            head.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
        reused = self._sock is not None
        if self._sock is None:
            self._sock = self._connect()
        wanted = self.endpoint.timeout if timeout is None else timeout
        if wanted != self._timeout:
            self._sock.settimeout(wanted)
            self._timeout = wanted
        try:
            self._sock.sendall(data)
            resp = self._read_response(method)
        except TransportError as exc:
            self.close()
            if reused and exc.retryable:
                raise
            raise TransportError(str(exc)) from None
        except OSError as exc:
            self.close()
            if reused and isinstance(exc, (BrokenPipeError, ConnectionResetError)):
                raise TransportError(str(exc), retryable=True) from None
            raise
        except BaseException:
            # Interrupted (Ctrl-C) between sending and reading the whole answer: what is still to
            # come of it would be read as the next request's answer (``xce submit -I``'s kill).
            self.close()
            raise
        if resp.headers.get("connection", "").lower() == "close":
            self.close()
        return resp

    # -- reading -------------------------------------------------------------------------------

    def _fill(self) -> bool:
        chunk = self._sock.recv(65536)  # type: ignore[union-attr]
        if not chunk:
            return False
        self._buf += chunk
        return True

    def _read_until(self, marker: bytes, first: bool = False) -> bytes:
        while True:
            pos = self._buf.find(marker)
            if pos >= 0:
                out, self._buf = self._buf[:pos], self._buf[pos + len(marker):]
                return out
            if len(self._buf) > MAX_HEAD:
                raise TransportError("the controller's answer has an oversized header")
            if not self._fill():
                if first and not self._buf:
                    raise TransportError("the controller closed the connection", retryable=True)
                raise TransportError("the controller closed the connection in the middle of an answer")

    def _read_exact(self, n: int) -> bytes:
        """``n`` bytes; a large answer (a listing of 100,000 jobs) is gathered in pieces and joined
        once, not copied again with each piece."""
        if len(self._buf) < n:
            parts, have = [self._buf], len(self._buf)
            while have < n:
                chunk = self._sock.recv(min(max(n - have, 65536), 1 << 22))  # type: ignore[union-attr]
                if not chunk:
                    raise TransportError("the controller closed the connection in the middle of an answer")
                parts.append(chunk)
                have += len(chunk)
            self._buf = b"".join(parts)
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _read_response(self, method: str) -> Response:
        head = self._read_until(b"\r\n\r\n", first=True).decode("latin-1")
        status_line, *lines = head.split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise TransportError(f"not an HTTP answer: {status_line[:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return Response(status, headers, b"")
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size_line = self._read_until(b"\r\n").split(b";")[0].strip()
                try:
                    size = int(size_line, 16)
                except ValueError:
                    raise TransportError(f"bad chunk size {size_line[:20]!r}") from None
                if size == 0:
                    while self._read_until(b"\r\n"):  # trailers, then the empty line
                        pass
                    return Response(status, headers, bytes(body))
                body += self._read_exact(size)
                self._read_exact(2)
        length = headers.get("content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                raise TransportError(f"bad Content-Length {length!r}") from None
            return Response(status, headers, self._read_exact(n))
        # No length: the body runs to the end of the connection.
        while self._fill():
            pass
        body, self._buf = self._buf, b""
        self.close()
        return Response(status, headers, body)
