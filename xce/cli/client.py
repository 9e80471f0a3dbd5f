"""Talking to the controller from a short-lived CLI process.

Uses the standard library's ``http.client`` rather than httpx on purpose: ``xce submit`` and
``xce jobs`` run in shell loops, and importing httpx alone costs ~80-100 ms (it pulls in its own
CLI, rich and click), which is most of the time budget of a whole command. One keep-alive
connection serves every request of a command.

Where the controller is and which token to use, first match wins:

* address: ``--url``, ``$XCE_URL``, ``<state-dir>/controller.json``; each may list several
  controllers separated by commas (``http://a:8000,http://b:8000``): requests go to the leader
* identity: ``--token``, ``$XCE_TOKEN``, ``<state-dir>/token``, ``<state-dir>/tokens/admin``; with
  none of them, a MUNGE credential per request when a ``munged`` socket is there
  (``$XCE_MUNGE_SOCKET``, default ``/run/munge/munge.socket.2``)
* CA bundle for an ``https://`` controller: ``$XCE_CA_FILE``, ``ca_file`` of ``controller.json``,
  else the system's
* state dir: ``--state-dir``, ``$XCE_STATE_DIR``, ``~/.xce``

No typer import here: the fast path of :mod:`xce.cli.spec` runs commands without typer. Exit codes
shared by all commands: 0 ok, 1 refused or failed, 2 usage, 3 controller unreachable.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from typing import Any, NoReturn
from urllib.parse import urlencode, urlsplit

from xce.controller import statedir

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


class Unreachable(Exception):
    pass


class ApiError(Exception):
    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.detail = detail


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
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


class Client:
    """One controller, or several (``http://a:8000,http://b:8000``): requests go to the leader, found
    and followed by :class:`xce.controller.follow.Leader`."""

    def __init__(self, url: str, token: str | None, timeout: float = 60.0, *, munge_socket: str | None = None,
                 ca_file: str | None = None) -> None:
        from xce.controller.follow import Leader, parse_urls

        try:
            self.leader = Leader(parse_urls(url))
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.munge_socket = None if token else munge_socket
        self.ca_file = ca_file
        self._conn: http.client.HTTPConnection | None = None
        self._conn_url: str | None = None

    @property
    def url(self) -> str:
        return self.leader.url

    def _connection(self, url: str) -> tuple[http.client.HTTPConnection, str]:
        parts = urlsplit(url)
        if self._conn is None or self._conn_url != url:
            self.close()
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if parts.scheme == "https":
                context = statedir.client_ssl_context(self.ca_file)
                self._conn = http.client.HTTPSConnection(parts.hostname, port, timeout=self.timeout, context=context)
            else:
                self._conn = http.client.HTTPConnection(parts.hostname, port, timeout=self.timeout)
            self._conn_url = url
        return self._conn, parts.path.rstrip("/")

    def _munge_header(self, method: str, path: str) -> str:
        """A fresh credential for this one request (munged refuses a credential decoded twice)."""
        from xce import munge

        try:
            cred = munge.encode(f"xce {method} {path.partition('?')[0]}".encode(), socket=self.munge_socket)
        except munge.MungeError as exc:
            raise Unreachable(f"cannot get a MUNGE credential from {self.munge_socket}: {exc}") from None
        return f"MUNGE {cred}"

    def _send(self, url: str, method: str, path: str, data: bytes | None, headers: dict[str, str]):
        """One exchange with the controller at ``url``: (status, headers, body)."""
        for attempt in (1, 2):
            conn, base = self._connection(url)
            if self.munge_socket:
                headers = dict(headers, Authorization=self._munge_header(method, base + path))
            try:
                conn.request(method, base + path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                return resp.status, resp.headers, (resp.status, raw)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the server closed: retry once on a fresh one.
                self.close()
                if attempt == 2:
                    raise
            except (OSError, http.client.HTTPException):
                self.close()
                raise
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        """The decoded JSON answer of a 2xx response; ApiError otherwise; Unreachable on network failure."""
        from xce.controller.follow import KEY_HEADER, NoLeader, request_key

        if params:
            path += "?" + urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
        data = json.dumps(body).encode() if body is not None else None
        headers = self.headers if method != "POST" else {**self.headers, KEY_HEADER: request_key()}
        where = self.leader.url if len(self.leader.urls) == 1 else "any of " + ", ".join(self.leader.urls)
        try:
            status, raw = self.leader.exchange(lambda url: self._send(url, method, path, data, headers),
                                               (OSError, http.client.HTTPException))
        except NoLeader as exc:
            raise Unreachable(f"no controller leads: {exc}") from None
        except ssl_errors() as exc:
            raise Unreachable(f"cannot reach the controller at {where} securely: {exc}") from None
        except (OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise Unreachable(f"cannot reach the controller at {where}: {reason}") from None
        try:
            obj = json.loads(raw) if raw else None
        except ValueError:
            obj = raw.decode(errors="replace")
        if status >= 400:
            raise ApiError(status, obj.get("detail", obj) if isinstance(obj, dict) else obj)
        return obj

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, body=body if body is not None else {})

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, body=body)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def connect(url: str | None = None, token: str | None = None, state_dir: str | None = None) -> Client:
    sd = statedir.resolve(state_dir)
    url = url or os.environ.get("XCE_URL") or ",".join(statedir.controller_urls(sd))
    if not url:
        fail(f"no controller address: pass --url, set XCE_URL, or start one with `xce controller` "
             f"(no {statedir.info_path(sd)})", EXIT_UNREACHABLE)
    token = token or os.environ.get("XCE_TOKEN") or statedir.read_token(sd)
    munge_socket = None
    if not token:
        munge_socket = os.environ.get("XCE_MUNGE_SOCKET") or "/run/munge/munge.socket.2"
        if not os.path.exists(munge_socket):
            fail(f"no token and no MUNGE: pass --token, set XCE_TOKEN, put yours in {sd / 'token'}, or run "
                 f"munged here ({munge_socket} does not exist; XCE_MUNGE_SOCKET names another)")
    return Client(url, token, munge_socket=munge_socket, ca_file=statedir.ca_file(sd) if "https://" in url else None)


def ssl_errors() -> tuple[type[BaseException], ...]:
    """TLS failures (a certificate that does not verify), without importing ssl for plain HTTP."""
    ssl = sys.modules.get("ssl")
    return (ssl.SSLError, ssl.CertificateError) if ssl is not None else ()


def call(fn, *args: Any, **kwargs: Any) -> Any:
    """Run one API call, turning failures into the CLI's messages and exit codes."""
    try:
        return fn(*args, **kwargs)
    except Unreachable as exc:
        fail(str(exc), EXIT_UNREACHABLE)
    except ApiError as exc:
        for line in describe(exc):
            print(f"xce: {line}", file=sys.stderr)
        raise SystemExit(EXIT_FAILED) from None


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")
