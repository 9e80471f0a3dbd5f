"""Clients of several controllers: which address to talk to, and when to move to another.

Every client of the controller (the CLI, the worker, the scheduler) takes a list of addresses
(``XCE_URL=http://a:8000,http://b:8000``) and talks to whichever controller leads. This module
holds that logic once, independent of the HTTP library; each client wraps its own request in
:meth:`Leader.exchange`:

* a connection that fails (refused, reset, timed out) moves on to the next address;
* a follower answers ``307`` or ``503`` with an ``X-XCE-Leader`` header (:mod:`xce.controller.gate`):
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

Standard library only (the CLI imports it); :func:`httpx_client` imports httpx when called.
"""

from __future__ import annotations

import os
import time
# No ``typing`` import: every ``xce submit`` loads this module, and the names below are only used in
# annotations, which ``from __future__ import annotations`` leaves as strings (T is the result type).

LEADER_HEADER = "X-XCE-Leader"
KEY_HEADER = "Idempotency-Key"
#: Seconds a client with several addresses keeps looking for a leader before it gives up.
DEFAULT_PATIENCE_S = 20.0
_PAUSE_S = 0.2



class NoLeader(Exception):
    """No address answered as (or led to) the leader within the client's patience."""


def split_url(url: str) -> tuple[str, str, int, str]:
    """``http://host:port/base`` -> (scheme, host, port, base): the one reading of a controller's
    address, for the services and for the CLI's transport (which must not import ``urllib``);
    ValueError says what is wrong with it."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError("expected http://HOST:PORT or https://HOST:PORT")
    hostport, slash, path = rest.partition("/")
    if hostport.startswith("["):  # [::1]:8080
        host, _, port_text = hostport[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = hostport.partition(":")
    if not host:
        raise ValueError("no host; expected http://HOST:PORT")
    try:
        port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"bad port: {port_text!r} is not a number") from None
    if not 0 < port < 65536:
        raise ValueError(f"bad port: {port} out of range")
    return scheme, host, port, ("/" + path).rstrip("/") if slash else ""


def parse_urls(text: str, where: str = "controller URL") -> list[str]:
    """``http://a:8000,http://b:8000`` -> the addresses, checked; ValueError names the bad one."""
    urls = [u.strip().rstrip("/") for u in text.split(",") if u.strip()]
    if not urls:
        raise ValueError(f"empty {where} (expected http://HOST:PORT, or several separated by commas)")
    for u in urls:
        try:
            split_url(u)
        except ValueError as exc:
            raise ValueError(f"invalid {where} {u!r} ({exc})") from None
    return urls


def request_key() -> str:
    """A fresh idempotency key for one logical request (the same for every retry of it)."""
    return os.urandom(16).hex()


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


class _FollowTransport:
    """An httpx transport that sends each request to the leader (see :class:`Leader`)."""

    def __init__(self, leader: Leader, **kwargs: Any) -> None:
        import httpx

        self.leader = leader
        self._inner = httpx.HTTPTransport(**kwargs)
        self._errors = (httpx.TransportError,)

    def handle_request(self, request):
        import httpx

        if request.method == "POST" and KEY_HEADER.lower() not in request.headers:
            request.headers[KEY_HEADER] = request_key()

        def send(base: str):
            b = httpx.URL(base)
            request.url = request.url.copy_with(scheme=b.scheme, host=b.host, port=b.port)
            request.headers["Host"] = request.url.netloc.decode("ascii")
            response = self._inner.handle_request(request)
            if response.status_code in (307, 503) and LEADER_HEADER in response.headers:
                response.read()
                response.close()
            return response.status_code, response.headers, response

        return self.leader.exchange(send, self._errors)

    def close(self) -> None:
        self._inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def httpx_client(urls: list[str] | str, token: str, *, timeout: float = 30.0, patience: float | None = None,
                 verify: Any = True) -> Any:
    """An ``httpx.Client`` whose every request goes to the leader among ``urls`` (worker, scheduler);
    ``verify`` as for httpx (an ``ssl.SSLContext`` for a controller with its own CA)."""
    import httpx

    leader = Leader(urls, patience)
    return httpx.Client(base_url=leader.url, transport=_FollowTransport(leader, verify=verify),
                        headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
