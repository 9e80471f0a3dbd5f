"""Clients of several controllers: which address to talk to, and when to move to another.

Every client of the controller (the CLI, the worker, the scheduler) takes a list of addresses
(``XCE_URL=http://a:8000,http://b:8000``) and talks to whichever controller leads. This module
holds that logic once (:class:`Leader`), and the one client that uses it (:class:`Session`):

* a connection that fails (refused, reset, timed out) moves on to the next address;
* a follower answers ``307`` or ``503`` with an ``X-XCE-Leader`` header (:mod:`xce.controller.ha.gate`):
  a non-empty one names the leader, which is tried next; an empty one means a takeover is under
  way, so the next address is tried after a short pause;
* anything else is the answer, whatever its status.

A follower's answer means nothing was done, so the request is simply sent again. A connection
that broke after the request was sent is ambiguous (the old leader may have committed it just
before it died); requests are sent again then too, which is safe because every request of the
API is idempotent or made so: a submission carries an ``Idempotency-Key`` (:func:`request_key`)
with which the controller returns the jobs the first attempt created.

With a single address and no ``patience`` a failure is reported at once, as it always was; with
several, the client keeps trying for ``patience`` seconds (a takeover takes a few seconds).

Standard library only: the CLI imports it in every command.
"""

from __future__ import annotations

import os
import time

from xce.client.urls import parse_urls

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: every ``xce submit`` loads this module, and typing costs imports
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    T = TypeVar("T")  # what one exchange returns

LEADER_HEADER = "X-XCE-Leader"
KEY_HEADER = "Idempotency-Key"
#: Seconds a client with several addresses keeps looking for a leader before it gives up.
DEFAULT_PATIENCE_S = 20.0
_PAUSE_S = 0.2



class NoLeader(Exception):
    """No address answered as (or led to) the leader within the client's patience."""


def request_key() -> str:
    """A fresh idempotency key for one logical request (the same for every retry of it)."""
    return os.urandom(16).hex()


def retryable(status: int) -> bool:
    """An answer that says "not now" rather than "no": the controller could not do the request (its
    database is away, it is overloaded, it lost the lead), so the same request, sent again later
    with the same idempotency key, may succeed. Every other status is final."""
    return status == 429 or status >= 500


def backoff(attempt: int, cap: float = 5.0, first: float = 0.1) -> float:
    """Seconds to wait before retry number ``attempt`` (1, 2, ...): doubling from ``first`` up to
    ``cap``, jittered by up to a quarter, so that a hundred workers do not retry in step."""
    base = min(cap, first * (2 ** min(attempt - 1, 30)))
    return base * (0.75 + 0.25 * int.from_bytes(os.urandom(2), "big") / 65535)


def retry_after(headers: Mapping[str, str], default: float) -> float:
    """The server's ``Retry-After`` in seconds (bounded to a minute), else ``default``."""
    value = _header(headers, "Retry-After")
    try:
        return min(60.0, max(0.0, float(value))) if value is not None else default
    except ValueError:
        return default


class Leader:
    """The addresses of one cluster's controllers and the one believed to lead."""

    def __init__(self, urls: list[str] | str, patience: float | None = None) -> None:
        self.urls = parse_urls(urls) if isinstance(urls, str) else list(urls)
        self.url = self.urls[0]
        self.patience = patience if patience is not None else (DEFAULT_PATIENCE_S if len(self.urls) > 1 else 0.0)

    def _next(self, after: str) -> None:
        i = self.urls.index(after) if after in self.urls else -1
        self.url = self.urls[(i + 1) % len(self.urls)]

    def exchange(self, send: Callable[[str], tuple[int, Mapping[str, str], T]],
                 transport_errors: tuple[type[BaseException], ...]) -> T:
        """``send(base_url)`` -> (status, headers, result) against the leader; returns the result.

        Raises the last transport error (or :class:`NoLeader` when only followers answered) once
        ``patience`` has run out.
        """
        deadline = time.monotonic() + self.patience
        attempts = hops = 0
        last: BaseException | None = None
        follower: NoLeader | None = None  # what a follower said: a better reason than a dead address
        while True:
            url = self.url
            try:
                status, headers, result = send(url)
            except transport_errors as exc:
                last = follower or exc
                self._next(url)
            else:
                hint = _header(headers, LEADER_HEADER)
                if status not in (307, 503) or hint is None:
                    return result
                last = follower = NoLeader(f"{url} is a follower and no controller leads at the moment" if not hint
                                           else f"{url} is a follower; the leader it names, {hint}, did not answer")
                if hint and hint != url:
                    if hint not in self.urls:
                        self.urls.append(hint)  # the leader is where the cluster says, listed or not
                    self.url = hint
                    hops += 1
                    if hops <= 2:
                        continue  # following a named leader is not a failure, even without patience
                else:
                    self._next(url)
            attempts += 1
            if time.monotonic() >= deadline:
                raise last
            if attempts % len(self.urls) == 0:
                hops = 0
                time.sleep(min(_PAUSE_S, max(0.0, deadline - time.monotonic())))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = headers.get(name.lower())
    return value


class Unreachable(Exception):
    """No controller answered: every address failed, or only followers answered (the message says
    which address and why). ``transient``: the kind of failure a restarting controller gives
    (refused, reset, timed out, nobody leads), not one that waiting cannot mend (a certificate)."""

    def __init__(self, message: str, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


class Session:
    """Requests to the leading controller among ``urls`` over one kept-alive connection
    (:mod:`xce.client.transport`): the one HTTP client of the CLI, the worker, the scheduler and
    ``xce up``. Not shared between threads: each thread makes its own.

    ``authorize(method, path)``, when given, makes the ``Authorization`` value of each request (a
    MUNGE credential is good for one request only); otherwise ``token`` is sent as a bearer token.
    """

    def __init__(self, urls: list[str] | str, token: str | None = None, *, timeout: float = 30.0,
                 patience: float | None = None, ca_file: str | None = None,
                 authorize: Callable[[str, str], str] | None = None) -> None:
        from xce.client.transport import Endpoint

        self.leader = Leader(urls, patience)  # ValueError names a bad address
        self.timeout, self.ca_file, self.authorize = timeout, ca_file, authorize
        self._endpoints = {u: Endpoint(u, ca_file=ca_file, timeout=timeout) for u in self.leader.urls}
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._conn: Any = None

    @property
    def url(self) -> str:
        return self.leader.url

    def _connection(self, url: str) -> Any:
        from xce.client.transport import Connection, Endpoint

        if self._conn is None or self._conn.endpoint.url != url:
            self.close()
            endpoint = self._endpoints.get(url)
            if endpoint is None:  # a leader named by a follower, not in the list we were given
                endpoint = self._endpoints[url] = Endpoint(url, ca_file=self.ca_file, timeout=self.timeout)
            self._conn = Connection(endpoint)
        return self._conn

    def _exchange(self, url: str, method: str, target: str, data: bytes | None, headers: dict[str, str],
                  timeout: float | None) -> tuple[int, Mapping[str, str], Any]:
        """One exchange with the controller at ``url``. A kept-alive connection the server closed
        meanwhile is retried once on a fresh one."""
        from xce.client.transport import TransportError

        for attempt in (1, 2):
            conn = self._connection(url)
            if self.authorize is not None:
                headers = dict(headers, Authorization=self.authorize(method, conn.endpoint.base + target))
            try:
                resp = conn.request(method, target, data, headers, timeout)
                return resp.status_code, resp.headers, resp
            except TransportError as exc:
                self.close()
                if not exc.retryable or attempt == 2:
                    raise
            except OSError:
                self.close()
                raise
        raise AssertionError("unreachable")

    def send(self, method: str, target: str, data: bytes | None = None, headers: dict[str, str] | None = None,
             timeout: float | None = None) -> Any:
        """The leader's :class:`~xce.client.transport.Response` to one request, whatever its
        status; :class:`Unreachable` when no controller answers."""
        headers = headers or self.headers
        urls = self.leader.urls
        where = self.leader.url if len(urls) == 1 else "any of " + ", ".join(urls)
        try:
            return self.leader.exchange(lambda url: self._exchange(url, method, target, data, headers, timeout),
                                        (OSError,))
        except NoLeader as exc:
            raise Unreachable(f"no controller leads: {exc}") from None
        except OSError as exc:
            if isinstance(exc, _ssl_errors()):  # ssl is imported by then, if the URL is https
                raise Unreachable(f"cannot reach the controller at {where} securely: {exc}", transient=False) from None
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            # Refused, reset, timed out: what a restarting controller gives. Not an HTTP answer at
            # all (another service on the port) is not mended by waiting.
            transient = isinstance(exc, (ConnectionError, TimeoutError)) or getattr(exc, "retryable", False)
            raise Unreachable(f"cannot reach the controller at {where}: {reason}", transient=transient) from None

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                timeout: float | None = None, key: str | None = None) -> Any:
        """``json`` as the body, ``params`` as the query (list values repeat the key, None is left out).
        A POST carries ``key`` or a fresh :func:`request_key`, so that a retry (a new leader, a dropped
        connection, a 503) is recognised by the controller and not done twice."""
        from xce import wirejson
        from xce.client.transport import query

        if params:
            q = query(params)
            if q:
                path += "?" + q
        data = wirejson.dumps(json).encode() if json is not None else None
        headers = self.headers if method != "POST" else {**self.headers, KEY_HEADER: key or request_key()}
        return self.send(method, path, data, headers, timeout)

    def persist(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                patience: float = 30.0, on_retry: Callable[[str], None] | None = None) -> Any:
        """:meth:`request` until a final answer (anything :func:`retryable` does not cover), retrying
        a retryable one or an unreachable controller with :func:`backoff` and one idempotency key
        for ``patience`` seconds; then the last retryable answer is returned (or Unreachable raised).
        ``on_retry(why)`` hears of each retry."""
        deadline = time.monotonic() + patience
        key = request_key()
        attempt = 0
        while True:
            attempt += 1
            try:
                r = self.request(method, path, json=json, params=params, key=key)
            except Unreachable as exc:
                if time.monotonic() >= deadline:
                    raise
                why, pause = str(exc), backoff(attempt)
            else:
                if not retryable(r.status_code) or time.monotonic() >= deadline:
                    return r
                why, pause = f"HTTP {r.status_code}", retry_after(r.headers, backoff(attempt))
            if on_retry is not None:
                on_retry(why)
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))

    def get(self, path: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        return self.request("GET", path, params=params, timeout=timeout)

    def post(self, path: str, json: Any = None, key: str | None = None) -> Any:
        return self.request("POST", path, json=json, key=key)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ssl_errors() -> tuple[type[BaseException], ...]:
    """TLS failures (a certificate that does not verify), without importing ssl for plain HTTP."""
    import sys

    ssl = sys.modules.get("ssl")
    return (ssl.SSLError, ssl.CertificateError) if ssl is not None else ()
