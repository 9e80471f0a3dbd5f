"""Talking to the controller from a short-lived CLI process.

``xce submit`` and ``xce jobs`` run in shell loops, so a client process imports only the standard
library's ``json``, ``os`` and ``_socket`` (see :mod:`xce.cli.transport` for why not httpx or
``http.client``; ``ssl`` only for ``https://``). One keep-alive connection serves every request of a
command.

Where the controller is and which token to use, first match wins:

* address: ``--url``, ``$XCE_URL``, ``<state-dir>/controller.json``; each may list several
  controllers separated by commas (``http://a:8000,http://b:8000``): requests go to the leader
* identity: ``--token``, ``$XCE_TOKEN``, ``<state-dir>/token``, ``<state-dir>/tokens/admin``; with
  none of them, a MUNGE credential per request when a ``munged`` socket is there
  (``$XCE_MUNGE_SOCKET``, default ``/run/munge/munge.socket.2``)
* CA bundle for an ``https://`` controller: ``$XCE_CA_FILE``, ``ca_file`` of ``controller.json``,
  else the system's
* state dir: ``--state-dir``, ``$XCE_STATE_DIR``, ``~/.xce``

Exit codes shared by all commands: 0 ok, 1 refused or failed, 2 usage, 3 controller unreachable.
"""

from __future__ import annotations

import json
import os
import sys

from xce.cli.transport import Connection, Endpoint, TransportError
from xce.controller import statedir

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


class Unreachable(Exception):
    pass


class ApiError(Exception):
    def __init__(self, status: int, detail) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.detail = detail


def fail(message: str, code: int = EXIT_FAILED):
    print(f"xce: {message}", file=sys.stderr)
    raise SystemExit(code)


def describe(err: ApiError) -> list[str]:
    """One line per problem: ``request: ... column 12: expected ...``."""
    detail = err.detail
    if isinstance(detail, list):
        lines = []
        for e in detail:
            loc = [str(p) for p in e.get("loc", []) if p not in ("body", "query", "path")]
            lines.append(f"{'.'.join(loc) + ': ' if loc else ''}{e.get('msg', e)}")
        return lines
    if isinstance(detail, str):
        return detail.splitlines() or [detail]
    return [f"HTTP {err.status}: {detail}"]


def quote(text: str) -> str:
    """Percent-encoding of a path segment or query value (RFC 3986 unreserved characters stay)."""
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in text.encode())


def query(params: dict) -> str:
    """``a=1&id=2&id=3`` from a dict whose list values repeat the key; None values are left out."""
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else (value,):
            pairs.append(f"{quote(str(key))}={quote(str(v))}")
    return "&".join(pairs)


class Client:
    """JSON requests to one controller, or to the leader of several (``http://a:8000,http://b:8000``,
    found and followed by :class:`xce.controller.follow.Leader`). :meth:`send` is the one place that
    touches the network."""

    def __init__(self, url: str, token: str | None, timeout: float = 60.0, *, munge_socket: str | None = None,
                 ca_file: str | None = None) -> None:
        from xce.controller.follow import Leader, parse_urls

        try:
            self.leader = Leader(parse_urls(url))
            self._endpoints = {u: Endpoint(u, ca_file=ca_file, timeout=timeout) for u in self.leader.urls}
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.munge_socket = None if token else munge_socket
        self.ca_file = ca_file
        self._conn: Connection | None = None

    @property
    def url(self) -> str:
        return self.leader.url

    def _connection(self, url: str) -> Connection:
        if self._conn is None or self._conn.endpoint.url != url:
            self.close()
            endpoint = self._endpoints.get(url)
            if endpoint is None:  # a leader named by a follower, not in the list we were given
                endpoint = self._endpoints[url] = Endpoint(url, ca_file=self.ca_file, timeout=self.timeout)
            self._conn = Connection(endpoint)
        return self._conn

    def _munge_header(self, method: str, path: str) -> str:
        """A fresh credential for this one request (munged refuses a credential decoded twice)."""
        from xce import munge

        try:
            cred = munge.encode(f"xce {method} {path.partition('?')[0]}".encode(), socket=self.munge_socket)
        except munge.MungeError as exc:
            raise Unreachable(f"cannot get a MUNGE credential from {self.munge_socket}: {exc}") from None
        return f"MUNGE {cred}"

    def _exchange(self, url: str, method: str, target: str, data: bytes | None, headers: dict[str, str]):
        """One exchange with the controller at ``url``: (status, headers, (status, body)). A kept-alive
        connection the server closed meanwhile is retried once on a fresh one."""
        for attempt in (1, 2):
            conn = self._connection(url)
            if self.munge_socket:
                headers = dict(headers, Authorization=self._munge_header(method, conn.endpoint.base + target))
            try:
                resp = conn.request(method, target, data, headers)
                return resp.status, resp.headers, (resp.status, resp.body)
            except TransportError as exc:
                self.close()
                if not exc.retryable or attempt == 2:
                    raise
            except OSError:
                self.close()
                raise
        raise AssertionError("unreachable")

    def send(self, method: str, target: str, data: bytes | None, headers: dict[str, str] | None = None
             ) -> tuple[int, bytes]:
        """Status and raw body of one request to the leader; Unreachable when no controller answers."""
        from xce.controller.follow import NoLeader

        headers = headers or self.headers
        urls = self.leader.urls
        where = self.leader.url if len(urls) == 1 else "any of " + ", ".join(urls)
        try:
            return self.leader.exchange(lambda url: self._exchange(url, method, target, data, headers), (OSError,))
        except NoLeader as exc:
            raise Unreachable(f"no controller leads: {exc}") from None
        except ssl_errors() as exc:
            raise Unreachable(f"cannot reach the controller at {where} securely: {exc}") from None
        except OSError as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise Unreachable(f"cannot reach the controller at {where}: {reason}") from None

    def request(self, method: str, path: str, body=None, params: dict | None = None):
        """The decoded JSON answer of a 2xx response; ApiError otherwise; Unreachable on network failure."""
        from xce.controller.follow import KEY_HEADER, request_key

        if params:
            q = query(params)
            if q:
                path += "?" + q
        data = json.dumps(body).encode() if body is not None else None
        # A retried POST (a new leader, a dropped connection) is recognised by its key and not done twice.
        headers = self.headers if method != "POST" else {**self.headers, KEY_HEADER: request_key()}
        status, raw = self.send(method, path, data, headers)
        try:
            obj = json.loads(raw) if raw else None
        except ValueError:
            obj = raw.decode(errors="replace")
        if status >= 400:
            raise ApiError(status, obj.get("detail", obj) if isinstance(obj, dict) else obj)
        return obj

    def get(self, path: str, **params):
        return self.request("GET", path, params=params)

    def post(self, path: str, body=None):
        return self.request("POST", path, body=body if body is not None else {})

    def patch(self, path: str, body):
        return self.request("PATCH", path, body=body)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def connect(url: str | None = None, token: str | None = None, state_dir: str | None = None) -> Client:
    sd = statedir.locate(state_dir)
    url = url or os.environ.get("XCE_URL") or ",".join(statedir.controller_urls(sd))
    if not url:
        fail(f"no controller address: pass --url, set XCE_URL, or start one with `xce controller` "
             f"(no {os.path.join(sd, statedir.INFO)})", EXIT_UNREACHABLE)
    token = token or os.environ.get("XCE_TOKEN") or statedir.read_token(sd)
    munge_socket = None
    if not token:
        munge_socket = os.environ.get("XCE_MUNGE_SOCKET") or "/run/munge/munge.socket.2"
        if not os.path.exists(munge_socket):
            fail(f"no token and no MUNGE: pass --token, set XCE_TOKEN, put yours in {os.path.join(sd, statedir.USER_TOKEN)}, or run "
                 f"munged here ({munge_socket} does not exist; XCE_MUNGE_SOCKET names another)")
    return Client(url, token, munge_socket=munge_socket, ca_file=statedir.ca_file(sd) if "https://" in url else None)


def ssl_errors() -> tuple[type[BaseException], ...]:
    """TLS failures (a certificate that does not verify), without importing ssl for plain HTTP."""
    ssl = sys.modules.get("ssl")
    return (ssl.SSLError, ssl.CertificateError) if ssl is not None else ()


def call(fn, *args, **kwargs):
    """Run one API call, turning failures into the CLI's messages and exit codes."""
    try:
        return fn(*args, **kwargs)
    except Unreachable as exc:
        fail(str(exc), EXIT_UNREACHABLE)
    except ApiError as exc:
        for line in describe(exc):
            print(f"xce: {line}", file=sys.stderr)
        raise SystemExit(EXIT_FAILED) from None


def print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")
