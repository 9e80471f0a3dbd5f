"""Talking to the controller from a short-lived CLI process.

``xce submit`` and ``xce jobs`` run in shell loops, so a client process imports only the standard
library's ``os``, ``_socket`` and the C half of ``json`` (:mod:`xce.wirejson`; see
:mod:`xce.client.transport` for why not httpx or ``http.client``; ``ssl`` only for
``https://``). One keep-alive connection serves every request of a command.

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

import os
import sys

from xce import wirejson
from xce.client import statedir
from xce.client.follow import Session, Unreachable  # noqa: F401 - Unreachable: for the commands
from xce.client.transport import query, quote  # noqa: F401 - for the commands

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs imports every command would pay
    from collections.abc import Callable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
#: Seconds a command keeps retrying a controller that does not answer, or answers "not now" (5xx,
#: 429), before it reports it: a supervised controller restarting, a takeover (as Slurm's clients
#: retry for their MessageTimeout).
RETRY_S = float(os.environ.get("XCE_RETRY_S", "15"))


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


class Client:
    """JSON requests to one controller, or to the leader of several (``http://a:8000,http://b:8000``)
    through a :class:`~xce.client.follow.Session`: answers are decoded JSON or :class:`ApiError`,
    and a bad address ends the command with a one-line message."""

    def __init__(self, url: str, token: str | None, timeout: float = 60.0, *, munge_socket: str | None = None,
                 ca_file: str | None = None) -> None:
        from xce.client.urls import parse_urls

        self.munge_socket = None if token else munge_socket
        #: Told why, at the first retry of a request (the front-ends say it in their program's words).
        self.on_retry: Callable[[str], None] | None = self._say_retry
        try:
            self.session = Session(parse_urls(url), token, timeout=timeout, ca_file=ca_file,
                                   authorize=self._munge_header if self.munge_socket else None)
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)

    @property
    def url(self) -> str:
        return self.session.url

    def _munge_header(self, method: str, path: str) -> str:
        """A fresh credential for this one request (munged refuses a credential decoded twice)."""
        from xce import munge

        try:
            cred = munge.encode(f"xce {method} {path.partition('?')[0]}".encode(), socket=self.munge_socket)
        except munge.MungeError as exc:
            raise Unreachable(f"cannot get a MUNGE credential from {self.munge_socket}: {exc}", transient=False) from None
        return f"MUNGE {cred}"

    def request(self, method: str, path: str, body=None, params: dict | None = None):
        """The decoded JSON answer of a 2xx response; ApiError otherwise; Unreachable on network failure."""
        resp = self._answer(method, path, body, params)
        try:
            return wirejson.loads(resp.body) if resp.body else None
        except ValueError:
            return resp.text

    def raw(self, path: str, params: dict | None = None) -> bytes:
        """The body of a GET's 2xx answer as it came (the exports are not JSON); ApiError otherwise."""
        return self._answer("GET", path, None, params).body

    def _answer(self, method: str, path: str, body, params: dict | None):
        resp = self._until_final(method, path, body, params)
        if resp.status_code < 400:
            return resp
        try:
            obj = wirejson.loads(resp.body) if resp.body else None
        except ValueError:
            obj = resp.text
        raise ApiError(resp.status_code, obj.get("detail", obj) if isinstance(obj, dict) else obj)

    def _until_final(self, method: str, path: str, body, params: dict | None):
        """The answer, once it is final: no answer (a controller restarting) or a 5xx or 429 (its
        database away a moment, a takeover) is retried with backoff for :data:`RETRY_S`, under one
        idempotency key, so a submission is made once however often it is sent. The first retry is
        said on standard error (:attr:`on_retry`), once."""
        import time

        from xce.client.follow import backoff, request_key, retry_after, retryable

        deadline = time.monotonic() + RETRY_S
        key = request_key() if method == "POST" else None
        attempt = 0
        while True:
            attempt += 1
            try:
                resp = self.session.request(method, path, json=body, params=params, key=key)
            except Unreachable as exc:
                if not exc.transient or time.monotonic() >= deadline:
                    raise
                why, pause = str(exc), backoff(attempt, cap=2.0)
            else:
                if not retryable(resp.status_code) or time.monotonic() >= deadline:
                    return resp
                why, pause = f"HTTP {resp.status_code}", retry_after(resp.headers, backoff(attempt, cap=2.0))
            if attempt == 1 and self.on_retry is not None:
                self.on_retry(why)
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))

    @staticmethod
    def _say_retry(why: str) -> None:
        print(f"xce: {why}; retrying for up to {RETRY_S:g}s (XCE_RETRY_S)", file=sys.stderr, flush=True)

    def get(self, path: str, **params):
        return self.request("GET", path, params=params)

    def post(self, path: str, body=None):
        return self.request("POST", path, body=body if body is not None else {})

    def patch(self, path: str, body):
        return self.request("PATCH", path, body=body)

    def close(self) -> None:
        self.session.close()


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


def uncollected(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with the cyclic garbage collector off. Why: decoding a listing of
    100,000 jobs makes millions of lists and dicts, none in a cycle, and the collector walking them
    again and again took three quarters of the time (1.0 s of 1.3 s for 15 MB); it is on again after."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        return fn(*args, **kwargs)
    finally:
        if was:
            gc.enable()


def jobs_of(answer: dict) -> list[dict]:
    """The jobs of a ``GET /v1/jobs`` answer as dicts: its ``jobs``, or its compact ``rows`` (asked
    for with ``columns``) keyed by its ``columns``."""
    if "rows" not in answer:
        return answer["jobs"]
    names = answer["columns"]
    return [dict(zip(names, row, strict=True)) for row in answer["rows"]]


def print_json(obj) -> None:
    import json

    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")
